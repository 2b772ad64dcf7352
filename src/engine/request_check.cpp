#include "engine/request_check.h"

#include "core/error.h"

namespace cairn {
namespace {

void check_ids(const ModelConfig& cfg, const Request& r) {
  for (size_t i = 0; i < r.prompt_ids.size(); ++i) {
    const int32_t id = r.prompt_ids[i];
    if (id < 0 || id >= cfg.vocab_size)
      fail(ErrorCode::kInvalidArgument,
           "prompt: token id {} at {} is outside the vocabulary [0, {})", id, i, cfg.vocab_size);
  }
  for (int32_t id : r.stop_ids)
    if (id < 0 || id >= cfg.vocab_size)
      fail(ErrorCode::kInvalidArgument, "stop token id {} is outside the vocabulary [0, {})", id,
           cfg.vocab_size);
}

}  // namespace

void check_request(const ModelConfig& cfg, const Request& r, bool has_tokenizer,
                   int64_t prompt_bytes, int64_t budget_bytes) {
  if (r.prompt_ids.empty()) fail(ErrorCode::kInvalidArgument, "prompt: it is empty");
  if (r.max_tokens < 1)
    fail(ErrorCode::kInvalidArgument, "max_tokens must be ≥ 1, got {}", r.max_tokens);
  if (r.logprobs < -1 || r.logprobs > 20)
    fail(ErrorCode::kInvalidArgument, "top_logprobs must be in [0, 20], got {}", r.logprobs);
  if (!r.stop_strings.empty() && !has_tokenizer)
    fail(ErrorCode::kInvalidArgument, "stop: stop strings need the model's tokenizer");
  check_ids(cfg, r);
  validate(r.sampling);
  validate(r.processors, static_cast<int32_t>(cfg.vocab_size));
  const auto n_prompt = static_cast<int64_t>(r.prompt_ids.size());
  if (n_prompt >= cfg.max_position_embeddings)
    fail(ErrorCode::kContextLength,
         "This model's maximum context length is {} tokens; the prompt has {} (leave room for "
         "at least one generated token)",
         cfg.max_position_embeddings, n_prompt);
  if (prompt_bytes > budget_bytes)
    fail(ErrorCode::kContextLength,
         "the prompt's {} tokens need {} bytes of KV cache; the KV budget holds {} (--kv-budget)",
         n_prompt, prompt_bytes, budget_bytes);
}

}  // namespace cairn
