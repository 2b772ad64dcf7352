// Kernel dispatch: one table of function pointers per device kind. A backend
// fills an OpTable and registers it; the free functions of ops.h check their
// arguments once (op_checks.h) and call the entry of their output's device.
// Entries may assume checked arguments.
#pragma once

#include <span>

#include "backend/ops.h"
#include "core/storage.h"

namespace cairn::ops {

struct OpTable {
  void (*matmul)(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y) = nullptr;
  void (*embedding)(const Tensor& table, std::span<const int32_t> ids, Tensor& y) = nullptr;
  void (*rms_norm)(const Tensor& x, const Tensor& w, float eps, Tensor& y) = nullptr;
  void (*layer_norm)(const Tensor& x, const Tensor& w, const Tensor* b, float eps,
                     Tensor& y) = nullptr;
  void (*rope)(Tensor& x, std::span<const int32_t> positions, const RopeParams& p) = nullptr;
  void (*attention)(const Tensor& q, const Tensor& k, const Tensor& v,
                    std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
                    const AttentionParams& p, Tensor& out) = nullptr;
  void (*attention_seqs)(const Tensor& q, std::span<const AttentionSeq> seqs,
                         std::span<const int32_t> q_positions, const AttentionParams& p,
                         Tensor& out) = nullptr;
  void (*attention_pages)(const Tensor& q, const KvPages& kv, std::span<const AttentionSeq> seqs,
                          std::span<const int32_t> q_positions, const AttentionParams& p,
                          Tensor& out) = nullptr;
  void (*gated_activation)(const Tensor& gate, const Tensor& up, Activation act,
                           Tensor& out) = nullptr;
  void (*gated_activation_fused)(const Tensor& gate_up, Activation act, Tensor& out) = nullptr;
  void (*add)(const Tensor& a, const Tensor& b, Tensor& y) = nullptr;
  void (*scale)(Tensor& x, float s) = nullptr;
  void (*softcap)(Tensor& x, float cap) = nullptr;
  void (*softmax)(const Tensor& x, Tensor& y) = nullptr;
  void (*log_softmax)(const Tensor& x, Tensor& y) = nullptr;
  void (*convert)(const Tensor& src, Tensor& dst) = nullptr;
  void (*convert_rows)(std::span<const RowCopy> copies) = nullptr;
  void (*quantize_rows)(std::span<const RowCopy> copies, const KvRowQuant& q) = nullptr;
  void (*split_columns)(const Tensor& x, std::span<Tensor* const> parts) = nullptr;
  void (*sample_rows)(Tensor& logits, std::span<const SampleRow> rows,
                      const SampleOutputs& out) = nullptr;
  // Optional: matmul_input_dtype's answer for w. A table that sets it takes x of w's dtype in
  // matmul and writes bf16/f16 y and out in rms_norm, add_rms_norm and the gated
  // activations; without it (f32 answers) ops.cpp converts around those entries.
  DType (*matmul_input_dtype)(const Tensor& w) = nullptr;
  // Optional fused forms: when empty, ops.cpp runs the ops they fuse.
  void (*add_rms_norm)(Tensor& x, const Tensor& r, const Tensor& w, float eps, Tensor& y) = nullptr;
  void (*split_rope)(const Tensor& qkv, std::span<const int32_t> positions, const RopeParams& p,
                     Tensor& q, Tensor& k, Tensor& v, const HeadNorms& norms) = nullptr;
};

// Installs (or replaces) the table of a device kind. Every entry must be set but the
// optional fused forms.
void register_op_table(DeviceKind kind, const OpTable& table);

// The table registered for `kind`; the CPU table is registered on first use.
// Throws Error(kUnsupported) when no backend for `kind` is built in.
const OpTable& op_table(DeviceKind kind);

// split_rope as the ops it fuses, through t's entries: the bits a fused split_rope entry must
// give, and its fallback where its kernel does not reach (checked arguments).
void split_rope_composed(const OpTable& t, const Tensor& qkv, std::span<const int32_t> positions,
                         const RopeParams& p, Tensor& q, Tensor& k, Tensor& v,
                         const HeadNorms& norms);

}  // namespace cairn::ops
