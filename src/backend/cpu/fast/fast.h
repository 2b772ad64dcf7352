// The CPU fast paths: multi-threaded over ThreadPool::global(), vectorized
// with AVX2+FMA+F16C or AVX-512 kernels picked by cpu::active_isa(). Each
// function has the signature of its op in ops.h and assumes checked arguments.
#pragma once

#include <span>

#include "backend/cpu/fast/kernels.h"
#include "backend/op_table.h"

namespace cairn::ops::fast {

// Overwrites the entries of `t` that have a fast path.
void fill_table(OpTable& t);

void matmul(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);
void embedding(const Tensor& table, std::span<const int32_t> ids, Tensor& y);
void rms_norm(const Tensor& x, const Tensor& w, float eps, Tensor& y);
void layer_norm(const Tensor& x, const Tensor& w, const Tensor* b, float eps, Tensor& y);
void rope(Tensor& x, std::span<const int32_t> positions, const RopeParams& p);
void attention(const Tensor& q, const Tensor& k, const Tensor& v,
               std::span<const int32_t> q_positions, std::span<const int32_t> kv_positions,
               const AttentionParams& p, Tensor& out);
void gated_activation(const Tensor& gate, const Tensor& up, Activation act, Tensor& out);
void gated_activation_fused(const Tensor& gate_up, Activation act, Tensor& out);
void add(const Tensor& a, const Tensor& b, Tensor& y);
void scale(Tensor& x, float s);
void softcap(Tensor& x, float cap);
void softmax(const Tensor& x, Tensor& y);
void log_softmax(const Tensor& x, Tensor& y);
void convert(const Tensor& src, Tensor& dst);
// The batched ops: loops over this table's attention and convert (cpu/seq_loops.h).
void attention_seqs(const Tensor& q, std::span<const AttentionSeq> seqs,
                    std::span<const int32_t> q_positions, const AttentionParams& p, Tensor& out);
void convert_rows(std::span<const RowCopy> copies);

// The kernel arguments of y = x · wᵀ (+ bias) for checked tensors.
MatmulArgs matmul_args(const Tensor& x, const Tensor& w, const Tensor* bias, Tensor& y);

// Runs fn over column ranges of y on the global pool (tests call it with a
// specific kernel to compare ISAs).
void run_matmul_cols(const MatmulArgs& a, void (*fn)(const MatmulArgs&, int64_t, int64_t, float*));

}  // namespace cairn::ops::fast
