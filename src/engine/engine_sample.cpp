// Sampling a step's rows: on the host, one row at a time through the
// processors and the sampler (sample/); on the model's GPU, every row in one
// ops::sample_rows call that brings back only the tokens and their logprobs.
// Both then take each token the same way (take_token).
#include <algorithm>

#include "backend/device.h"
#include "engine/engine_loop.h"
#include "model/config.h"
#include "sample/row_args.h"

namespace cairn {
namespace {

std::span<const int32_t> prompt_of(const Sequence& s) {
  return std::span<const int32_t>(s.tokens).first(static_cast<size_t>(s.n_prompt));
}
std::span<const int32_t> generated_of(const Sequence& s) {
  return std::span<const int32_t>(s.tokens).subspan(static_cast<size_t>(s.n_prompt));
}

// Row i of the op's results as the sampler's: the list cut to the request's n_top.
SampleResult result_of(const Tensor& ids, const Tensor& lps, const Tensor* top_ids,
                       const Tensor* top_lps, int64_t i, int32_t n_top) {
  SampleResult r{ids.data<int32_t>()[i], lps.data<float>()[i], {}};
  if (!top_ids) return r;
  const int64_t width = top_ids->dim(1);
  for (int64_t k = 0; k < std::min<int64_t>(n_top, width); ++k) {
    const int32_t id = top_ids->data<int32_t>()[i * width + k];
    if (id < 0) break;
    r.top.push_back({id, top_lps->data<float>()[i * width + k]});
  }
  return r;
}

}  // namespace

// Processors, then the sampler at the request's (seed, step).
void Engine::Loop::sample_row(ActiveRequest& a, std::span<const float> logits) {
  const Sequence& s = a.seq;
  const Request& r = s.request;
  if (options_.logits_observer) options_.logits_observer(s.id, logits);
  std::copy(logits.begin(), logits.end(), row_.begin());
  apply_processors(row_, r.processors, prompt_of(s), generated_of(s));
  take_token(a, sample(row_, r.sampling, static_cast<uint64_t>(s.n_generated()), r.logprobs));
}

// logits [rows.size(), vocab] on the model's device; edited in place by the
// processors. The observer, if any, sees the rows as the model wrote them. A
// null row (a sequence cut back after the forward) is sampled with default
// arguments in the same call and its token dropped.
void Engine::Loop::sample_on_device(const std::vector<ActiveRequest*>& rows, Tensor& logits) {
  const auto n = static_cast<int64_t>(rows.size());
  if (std::count(rows.begin(), rows.end(), nullptr) == n) return;
  if (options_.logits_observer) observe(rows, logits);
  std::vector<ProcessorLists> lists(rows.size());  // a null row's stay empty
  std::vector<ops::SampleRow> args(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    args[i] = sample_row_args({}, 0, 0, ProcessorParams{}, lists[i]);
  int32_t width = 0;  // the longest top list asked for
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i]) continue;
    const Sequence& s = rows[i]->seq;
    const Request& r = s.request;
    lists[i] = processor_lists(r.processors, prompt_of(s), generated_of(s));
    args[i] = sample_row_args(r.sampling, static_cast<uint64_t>(s.n_generated()), r.logprobs,
                              r.processors, lists[i]);
    width = std::max(width, r.logprobs);
  }
  Tensor ids = Tensor::empty({n}, DType::kI32), lps = Tensor::empty({n}, DType::kF32);
  Tensor top_ids, top_lps;
  if (width > 0) {
    top_ids = Tensor::empty({n, width}, DType::kI32);
    top_lps = Tensor::empty({n, width}, DType::kF32);
  }
  ops::sample_rows(logits, args,
                   {&ids, &lps, width > 0 ? &top_ids : nullptr, width > 0 ? &top_lps : nullptr});
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i])
      take_token(*rows[i],
                 result_of(ids, lps, width > 0 ? &top_ids : nullptr, width > 0 ? &top_lps : nullptr,
                           static_cast<int64_t>(i), rows[i]->seq.request.logprobs));
}

// The observer's copy of device logits: one transfer, then a row per request.
void Engine::Loop::observe(const std::vector<ActiveRequest*>& rows, const Tensor& logits) {
  Tensor host = Tensor::empty(logits.shape(), DType::kF32);
  DeviceBackend& b = device_backend(logits.device().kind);
  b.copy(logits, host);
  b.synchronize();
  const auto vocab = static_cast<size_t>(logits.dim(1));
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i])
      options_.logits_observer(rows[i]->seq.id,
                               std::span<const float>(host.data<float>() + i * vocab, vocab));
}

// Emits the token and finishes the sequence on a stop id, a stop string,
// max_tokens or the context's end.
void Engine::Loop::take_token(ActiveRequest& a, const SampleResult& sr) {
  Sequence& s = a.seq;
  const Request& r = s.request;
  s.tokens.push_back(sr.id);
  ++counts_.generated_tokens;
  note_sampled(a, sr);
  Event e;
  e.tokens.push_back({sr.id, sr.logprob, r.logprobs > 0 ? sr.top : std::vector<TokenLogprob>{}});
  SeqOutput::Delta d = a.output->feed(sr.id);
  e.text = std::move(d.text);
  const bool stop_id = std::find(r.stop_ids.begin(), r.stop_ids.end(), sr.id) != r.stop_ids.end();
  const bool at_limit =
      s.n_generated() >= r.max_tokens ||
      static_cast<int64_t>(s.tokens.size()) >= model_.config().max_position_embeddings;
  if (d.stopped || stop_id || at_limit) {
    if (!d.stopped) e.text += a.output->flush();
    a.stop_index = d.stop_index;
    a.stream->push(std::move(e));
    finish(a, d.stopped || stop_id ? FinishReason::kStop : FinishReason::kLength);
    return;
  }
  a.stream->push(std::move(e));
  const int32_t every = options_.generation_checkpoint_tokens;
  if (ckpt_store_ && every > 0 && s.n_generated() % every == 0) checkpoint(a);
}

}  // namespace cairn
