// A KvView for a model on any device: per sequence slot and layer, one
// contiguous K and one V buffer of max_tokens rows in that device's memory,
// position p at row p: f32, bf16 or f16 [max_tokens, n_kv_heads, head_dim], or
// affine-quantized rows u8 [max_tokens, n_kv_heads, quant.row_bytes(head_dim)]
// (ops::KvRowQuant, the paged KV's affine bytes). Per layer, one
// ops::convert_rows (ops::quantize_rows) puts every span's f32 K and V rows into
// its slot's buffers, and one ops::attention_seqs attends every span over rows
// [0, n_tokens) of its slot (causal by position, windows masked, nothing freed):
// two calls whatever the number of sequences. The GPU's cache until paged device
// pages land; on the CPU it equals ContiguousKvCache up to the attention kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/ops.h"
#include "kv/kv_format.h"
#include "model/config.h"
#include "model/kv_view.h"

namespace cairn {

class DeviceKvCache final : public KvView {
 public:
  // Buffers of a slot are allocated on its first append. dtype: f32, bf16 or f16,
  // the rows' dtype unless `quant` is enabled (then rows are stored in its format;
  // Error(kInvalidArgument) unless bits 4 or 8, group_size 32/64/128 dividing head_dim).
  DeviceKvCache(const ModelConfig& config, Device device, DType dtype, int32_t n_slots,
                int64_t max_tokens, ops::KvRowQuant quant = {});

  Device device() const { return device_; }
  void reset(int32_t slot);
  int64_t n_tokens(int32_t slot) const;
  // Benchmarks: makes `slot` hold n_tokens positions (0 .. n_tokens-1) of K and
  // V uniform in [-1, 1) from `seed` in every layer, without computing them —
  // a long context at the cost of a fill (quantized: filled in f32 chunks, then
  // quantize_rows). Error(kOutOfMemory) past max_tokens.
  void fill_random(int32_t slot, int64_t n_tokens, uint64_t seed);
  // Bytes one slot's buffers take once allocated.
  size_t slot_bytes() const;
  // Bytes of one position's K (or V) row of one layer: n_kv_heads head rows.
  size_t row_bytes() const;
  const ops::KvRowQuant& quant() const { return quant_; }
  // Layer il's K (V) rows of an allocated slot (tests), shaped as in Slot.
  const Tensor& k_buffer(int32_t slot, int il) const;
  const Tensor& v_buffer(int32_t slot, int il) const;

  // Error(kOutOfMemory) past max_tokens; Error(kInvalidArgument) for a slot out
  // of range or positions that do not continue the slot's.
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override;

 private:
  struct Slot {
    // [n_layers] of [max_tokens, n_kv_heads, head_dim] (dtype_), or of u8
    // [max_tokens, n_kv_heads, quant_.row_bytes(head_dim)] when quant_ is enabled.
    std::vector<Tensor> k, v;
    std::vector<int64_t> n_layer;  // [n_layers] rows written per layer
  };
  Slot& slot_for(int32_t seq_slot);
  // Checks every span of `batch` against layer il's lengths (positions continue
  // each slot's, max_tokens) before anything is written; returns each span's
  // slot length after its append (0 for an empty span).
  std::vector<int64_t> lengths_after(int il, const ForwardBatch& batch);
  // fill_random of a quantized cache: rows [0, n_tokens) of buf from f32 chunks.
  void fill_quantized(Tensor& buf, int64_t n_tokens, uint64_t seed);

  Device device_;
  DType dtype_;
  int64_t n_layers_, n_kv_heads_, head_dim_, max_tokens_;
  ops::KvRowQuant quant_;
  std::vector<Slot> slots_;
};

}  // namespace cairn
