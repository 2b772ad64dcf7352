// Batch-invariant determinism (DESIGN.md decision 7): a request's logits and
// tokens are bit-identical (a) alone and batched with 64 others of different
// lengths, (b) for prefill chunk sizes 1, 7, 64 and 2048, (c) with its prefix
// from the cache and computed — on stories260K and on the llama, gemma2 (sliding
// window, softcaps) and qwen3 fixtures, with full-precision and 8-bit KV, at one
// rank and over 2 or 4 tensor-parallel ranks (engine_case.h). Built again with
// CAIRN_ENGINE_ON_GPU (tests/gpu/models) for the same checks on a GPU, pages in
// device memory, the split cases' ranks sharing one GPU, and a random head_dim-64 model whose
// rows take the tensor-core attention, with exact and with fast products.
#include <gtest/gtest.h>

#include "engine_case.h"

namespace cairn::test {
namespace {

class Determinism : public EngineCaseTest {};

TEST_P(Determinism, AloneEqualsBatchedWithSixtyFourOthers) {
  const Outcome solo = alone();
  ASSERT_EQ(solo.ids.size(), 12u);
  Engine e(model(), nullptr, options(4096, 65));
  std::vector<std::shared_ptr<RequestStream>> others;
  auto add_others = [&](uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to; ++i)
      others.push_back(e.submit(test_request(test_prompt(3 + (i * 37) % 140, 100 + i, vocab()),
                                             static_cast<int32_t>(4 + i % 17), 0.7f, i)));
  };
  add_others(0, 32);
  std::shared_ptr<RequestStream> t = e.submit(target());
  add_others(32, 64);
  const Outcome batched = collect(t, log);
  for (auto& s : others) EXPECT_EQ(s->collect().finish, FinishReason::kLength);
  EXPECT_EQ(batched.ids, solo.ids);
  EXPECT_TRUE(bit_equal_rows(batched.logits, solo.logits));
  EXPECT_GT(e.stats().steps, 0);
}

TEST_P(Determinism, PrefillChunkSizeChangesNothing) {
  const Outcome whole = alone(2048);
  for (int64_t chunk : {1, 7, 64}) {
    const Outcome chunked = alone(chunk);
    EXPECT_EQ(chunked.ids, whole.ids) << "chunk " << chunk << ": " << chunked.final.error;
    EXPECT_TRUE(bit_equal_rows(chunked.logits, whole.logits)) << "chunk " << chunk;
  }
}

TEST_P(Determinism, PrefixFromTheCacheEqualsComputed) {
  const Outcome computed = alone();
  Engine e(model(), nullptr, options(2048, 4, int64_t{64} << 20));
  // A shares the target's first 70 tokens; the target then finds 64 (two pages) cached.
  std::vector<int32_t> shared = target().prompt_ids;
  shared.resize(70);
  shared.push_back(5);
  // max_tokens 1: it finishes at its first step and must still publish its pages.
  const Outcome first = collect(e.submit(test_request(shared, 1, 0.9f, 1)), log);
  EXPECT_EQ(first.final.usage.cached_tokens, 0);
  const Outcome hit = collect(e.submit(target()), log);
  EXPECT_EQ(hit.final.usage.cached_tokens, 64);
  EXPECT_EQ(hit.ids, computed.ids);
  EXPECT_TRUE(bit_equal_rows(hit.logits, computed.logits));
  // The same request again: its own prompt pages (and more) are cached now.
  const Outcome again = collect(e.submit(target()), log);
  EXPECT_EQ(again.final.usage.cached_tokens, 64);  // capped before the last prompt token
  EXPECT_EQ(again.ids, computed.ids);
  EXPECT_TRUE(bit_equal_rows(again.logits, computed.logits));
  EXPECT_GE(e.stats().prefix_hits, 2);
}

std::vector<EngineCase> all_cases() {
  std::vector<EngineCase> c = {{"stories260K", kStoriesDir},
                               {"llama", fixture_dir("llama")},
                               {"gemma2", fixture_dir("gemma2")},
                               {"qwen3", fixture_dir("qwen3")},
                               {"default_q8", kDefaultModelDir, 1, 8}};
#ifdef CAIRN_ENGINE_ON_GPU
  // Every rank of a split case on GPU 0 (engine_case.h); not the default model (its file is
  // not among the GPU suite's fixtures).
  for (EngineCase& tp : tp_cases())
    if (tp.dir != kDefaultModelDir) c.push_back(std::move(tp));
  // Tensor-core attention rows, with exact and with fast products.
  c.push_back({"tiny_hd64", kTinyHd64Dir});
  c.push_back({"tiny_hd64_fast_attention", kTinyHd64Dir, 1, 0, DeviceKind::kCpu, true});
  for (EngineCase& g : c) g.device = DeviceKind::kCuda;
#else
  for (EngineCase& tp : tp_cases()) c.push_back(std::move(tp));
#endif
  return c;
}

INSTANTIATE_TEST_SUITE_P(Models, Determinism, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace cairn::test
