// `cairn fit` arithmetic: bytes a model needs to serve a context (weights, KV
// pages, transient workspace), whether they fit a budget, the longest context
// that does, and the decode rate a memory bandwidth allows. Pure and
// deterministic; KV bytes are counted in whole pages as the pool takes them.
#pragma once

#include <cstdint>

#include "kv/kv_format.h"
#include "model/config.h"

namespace cairn {

struct FitInput {
  ModelConfig config;
  int64_t weight_bytes = 0;
  int64_t ctx_tokens = 0;  // positions per sequence
  int32_t batch = 1;       // sequences held at once
  KvStore full_store = KvStore::kBF16;
  KvQuantScheme quant;  // disabled: full precision
  int64_t page_tokens = 32;
  int64_t rollback_tokens = 0;
  int64_t prefill_chunk_tokens = 512;
  int64_t budget_bytes = 0;  // 0: no budget (fits; no largest context)
  double bandwidth_gbs = 0;  // 0: no decode prediction
};

struct FitResult {
  int64_t kv_bytes_per_seq = 0;  // pages one sequence holds at ctx_tokens
  int64_t kv_bytes = 0;          // batch × kv_bytes_per_seq
  int64_t workspace_bytes = 0;
  int64_t total_bytes = 0;  // weights + kv + workspace
  bool fits = true;
  int64_t max_ctx_tokens = 0;          // longest context (page multiple) whose total fits; -1: none
  double decode_tokens_per_s = 0;      // per sequence; bytes read per step / bandwidth
  double decode_tokens_per_s_all = 0;  // over the batch
};

// Bytes of the pages one sequence holds after ctx positions (sliding groups
// keep ceil((W + R) / page) + 1 pages at most; quantized once ctx ≥ quant_start).
int64_t kv_bytes_at(const FitInput& in, int64_t ctx_tokens);

// Activations of one prefill chunk plus the logits of the batch (f32).
int64_t workspace_bytes(const FitInput& in);

// Parameters implied by a config (embeddings, attention, gated MLP, norms).
int64_t estimate_params(const ModelConfig& c);

FitResult plan_fit(const FitInput& in);

}  // namespace cairn
