// Model runs on the GPU for the tests that compare two ways of running the same steps
// (graphs against eager, fused inputs against separate passes, kernels overlapped or not): a
// model of a fixture on the GPU with its KV cache, one decode step of several sequences, and a
// run of prefills and decode steps.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpu_case.h"
#include "kv/device_cache.h"
#include "model/registry.h"
#include "reference.h"

namespace cairn::test {

struct GpuRun {
  std::unique_ptr<Model> model;
  std::unique_ptr<DeviceKvCache> kv;
};

// The fixture in `dir` on the GPU, step graphs up to max_graph_batch (0: eager), KV of
// kv_dtype for 3 sequences of up to 128 positions.
inline GpuRun make_gpu_run(const std::string& dir, int64_t max_graph_batch,
                           DType kv_dtype = DType::kF32) {
  GpuRun r{load_model(dir, {}), nullptr};
  r.model->to_device(kGpu);
  r.model->set_step_graphs(max_graph_batch);
  r.kv = std::make_unique<DeviceKvCache>(r.model->config(), kGpu, kv_dtype, 3, 128);
  return r;
}

// One decode step: token `tokens[i]` at `positions[i]` for slot slots[i]; the logits [n, vocab].
inline std::vector<float> decode_step(GpuRun& r, const std::vector<int32_t>& slots,
                                      const std::vector<int32_t>& tokens,
                                      const std::vector<int32_t>& positions) {
  ForwardBatch b;
  b.tokens = tokens, b.positions = positions;
  for (size_t i = 0; i < slots.size(); ++i)
    b.spans.push_back({slots[i], static_cast<int64_t>(i), 1, true});
  const int64_t vocab = r.model->config().vocab_size;
  Tensor logits = Tensor::empty({static_cast<int64_t>(slots.size()), vocab}, DType::kF32);
  r.model->forward(b, *r.kv, logits);
  return std::vector<float>(logits.data<float>(), logits.data<float>() + logits.numel());
}

// Every logit row of a run over `ref`'s prompt: three sequences prefilled (whole, one row then
// the rest, chunks of 7 and the rest), then decode steps of three, two and one sequences
// through step graphs.
inline std::vector<std::vector<float>> prefill_and_decode(const std::string& dir,
                                                          const Reference& ref,
                                                          DType kv_dtype = DType::kF32) {
  GpuRun r = make_gpu_run(dir, kDefaultGraphBatch, kv_dtype);
  const std::vector<int32_t>& ids = ref.prompt_ids;
  std::vector<std::vector<float>> out;
  std::vector<int32_t> length = {5, 9, static_cast<int32_t>(ids.size())}, next(3);
  out.push_back(run_span(*r.model, *r.kv, 0, ids, 0, length[0]));
  out.push_back(run_span(*r.model, *r.kv, 1, ids, 0, 1));
  out.push_back(run_span(*r.model, *r.kv, 1, ids, 1, length[1]));
  out.push_back(run_span(*r.model, *r.kv, 2, ids, 0, 7));
  out.push_back(run_span(*r.model, *r.kv, 2, ids, 7, length[2]));
  next = {argmax(out[0]), argmax(out[2]), argmax(out[4])};
  const int64_t vocab = r.model->config().vocab_size;
  for (int step = 0; step < 8; ++step) {
    const int32_t n = step < 4 ? 3 : step < 6 ? 2 : 1;
    std::vector<int32_t> slots, tokens, positions;
    for (int32_t s = 0; s < n; ++s)
      slots.push_back(s), tokens.push_back(next[s]), positions.push_back(length[s]++);
    out.push_back(decode_step(r, slots, tokens, positions));
    for (int32_t s = 0; s < n; ++s)
      next[s] = argmax(
          std::vector<float>(out.back().begin() + s * vocab, out.back().begin() + (s + 1) * vocab));
  }
  return out;
}

// Every family's fixture in f32 and bf16 weights ("llama/f32", …), and a test name of one.
inline std::vector<std::string> family_fixtures() {
  std::vector<std::string> out;
  for (const char* f : {"llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3"})
    for (const char* w : {"f32", "bf16"}) out.push_back(std::string(f) + "/" + w);
  return out;
}

inline std::string fixture_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

}  // namespace cairn::test
