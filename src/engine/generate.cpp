#include "engine/generate.h"

#include <algorithm>
#include <chrono>

#include "backend/device.h"
#include "core/error.h"
#include "kv/paged_kv.h"
#include "model/config.h"
#include "model/tp/sharded_kv.h"
#include "sample/row_args.h"

namespace cairn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check_request(const ModelConfig& cfg, const GenerateRequest& r) {
  if (r.prompt_ids.empty()) fail(ErrorCode::kInvalidArgument, "the prompt is empty");
  if (r.max_tokens < 0)
    fail(ErrorCode::kInvalidArgument, "max_tokens must be ≥ 0, got {}", r.max_tokens);
  if (r.prefill_chunk_tokens <= 0)
    fail(ErrorCode::kInvalidArgument, "prefill chunk must be > 0, got {}", r.prefill_chunk_tokens);
  int64_t n_prompt = static_cast<int64_t>(r.prompt_ids.size());
  if (n_prompt >= cfg.max_position_embeddings)
    fail(ErrorCode::kInvalidArgument, "the prompt has {} tokens; the context holds {}", n_prompt,
         cfg.max_position_embeddings);
  for (int32_t id : r.prompt_ids)
    if (id < 0 || id >= cfg.vocab_size)
      fail(ErrorCode::kInvalidArgument, "token id {} is outside the vocabulary [0, {})", id,
           cfg.vocab_size);
  validate(r.sampling);
}

// One forward step over tokens [begin, end) of `ids` at positions begin..end-1,
// writing the last row's logits.
void step(Model& model, KvView& cache, const std::vector<int32_t>& ids, int64_t begin, int64_t end,
          Tensor& logits) {
  ForwardBatch batch;
  batch.tokens.assign(ids.begin() + begin, ids.begin() + end);
  for (int64_t p = begin; p < end; ++p) batch.positions.push_back(static_cast<int32_t>(p));
  batch.spans.push_back({0, 0, end - begin, true});
  model.forward(batch, cache, logits);
}

// The paged state, its pages where the model computes (taken only as the
// sequence grows). `cfg`: the model's config, or one KV shard's.
std::unique_ptr<KvView> cache_for(const ModelConfig& cfg, Device device, const KvSettings& kv) {
  PagedKvOptions o = paged_kv_options(cfg, kv, int64_t{1} << 50);  // checks the settings
  o.device = device;
  return std::make_unique<PagedKvState>(cfg, o);
}

// One cache, or one per KV shard of a tensor-parallel model (each with its rank's heads).
std::unique_ptr<KvView> single_sequence_cache(const Model& model, const KvSettings& kv) {
  std::vector<ModelConfig> shards = model.kv_shard_configs();
  const std::vector<Device> devices = model.kv_shard_devices();  // each rank's shard on its own
  if (shards.size() == 1) return cache_for(shards[0], devices[0], kv);
  std::vector<std::unique_ptr<KvView>> views;
  for (size_t r = 0; r < shards.size(); ++r) views.push_back(cache_for(shards[r], devices[r], kv));
  return std::make_unique<tp::ShardedKvView>(std::move(views));
}

// The token of logits [1, vocab] on the model's device: the sampling chain
// runs there (ops::sample_rows) and only the id comes back.
int32_t device_token(Tensor& logits, const SamplingParams& p, uint64_t step) {
  const ProcessorLists none;
  const ops::SampleRow row = sample_row_args(p, step, -1, ProcessorParams{}, none);
  Tensor id = Tensor::empty({1}, DType::kI32), logprob = Tensor::empty({1}, DType::kF32);
  ops::sample_rows(logits, {&row, 1}, {&id, &logprob, nullptr, nullptr});
  return id.data<int32_t>()[0];
}

}  // namespace

GenerateResult generate(Model& model, const GenerateRequest& request,
                        const TokenCallback& on_token) {
  const ModelConfig& cfg = model.config();
  check_request(cfg, request);
  std::vector<int32_t> ids = request.prompt_ids;
  int64_t n_prompt = static_cast<int64_t>(ids.size());
  int64_t limit = std::min<int64_t>(n_prompt + request.max_tokens, cfg.max_position_embeddings);
  std::unique_ptr<KvView> kv = single_sequence_cache(model, request.kv);
  KvView& cache = *kv;
  // On a GPU the logits stay there and only the sampled id comes back.
  const bool on_device = model.device().kind != DeviceKind::kCpu;
  Tensor logits = on_device ? empty_on(model.device(), {1, cfg.vocab_size}, DType::kF32)
                            : Tensor::empty({1, cfg.vocab_size}, DType::kF32);
  GenerateResult result;

  auto t0 = Clock::now();
  for (int64_t b = 0; b < n_prompt; b += request.prefill_chunk_tokens)
    step(model, cache, ids, b, std::min<int64_t>(n_prompt, b + request.prefill_chunk_tokens),
         logits);
  result.prefill_seconds = seconds_since(t0);

  auto t1 = Clock::now();
  for (int64_t pos = n_prompt; pos < limit; ++pos) {
    if (pos > n_prompt) step(model, cache, ids, pos - 1, pos, logits);
    const uint64_t n = result.ids.size();
    const int32_t id =
        on_device ? device_token(logits, request.sampling, n)
                  : sample_token({logits.data<float>(), static_cast<size_t>(cfg.vocab_size)},
                                 request.sampling, n);
    ids.push_back(id);
    result.ids.push_back(id);
    if (!on_token(id)) {
      result.finish = FinishReason::kCancelled;
      break;
    }
    if (std::find(request.stop_ids.begin(), request.stop_ids.end(), id) != request.stop_ids.end()) {
      result.finish = FinishReason::kStop;
      break;
    }
  }
  result.decode_seconds = seconds_since(t1);
  return result;
}

}  // namespace cairn
