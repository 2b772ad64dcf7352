// The serving engine over a tensor-parallel model (docs/tensor-parallel.md):
// one engine thread and scheduler, the KV state sharded with the heads. At a
// fixed N a request's logits are bit-identical alone and batched, whole and
// chunked, prefix computed (determinism_test.cpp) and from the SSD tier; across N
// greedy tokens equal one rank's. Pages cached at N ranks are never served at another N.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine_case.h"
#include "prefix/page_file.h"
#include "ssd_fixture.h"

namespace cairn::test {
namespace {

namespace fs = std::filesystem;

// The determinism tests run every tensor-parallel case too (determinism_test.cpp); here what
// only several ranks have.
class TpDeterminism : public EngineCaseTest {};

// Across N the logits differ in the last bits (split dot products), the
// greedy tokens not: several greedy requests batched at N against one rank.
TEST_P(TpDeterminism, GreedyTokensEqualOneRank) {
  auto run = [&](Model& m) {
    Engine e(m, nullptr, options(2048, 8));
    std::vector<std::shared_ptr<RequestStream>> s;
    for (uint32_t i = 0; i < 6; ++i)
      s.push_back(e.submit(test_request(test_prompt(5 + 23 * i, 300 + i, vocab()), 16, 0.f, i)));
    std::vector<std::vector<int32_t>> ids;
    for (auto& r : s) ids.push_back(collect(r, log).ids);
    return ids;
  };
  const auto one = run(model(1));
  const auto split = run(model());
  ASSERT_EQ(one.size(), split.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].size(), 16u);
    EXPECT_EQ(split[i], one[i]) << "request " << i;
  }
}

// The engine reports bytes over all shards: the same budget as one rank, and a
// cached page costs N shards of n_kv_heads / N heads (more where KV heads are
// replicated).
TEST_P(TpDeterminism, StatsCountEveryShardsBytes) {
  Engine one(model(1), nullptr, options(2048, 2, int64_t{64} << 20));
  Engine split(model(), nullptr, options(2048, 2, int64_t{64} << 20));
  EXPECT_EQ(split.stats().kv_bytes_budget, one.stats().kv_bytes_budget);
  collect(one.submit(target()), log);
  collect(split.submit(target()), log);
  const int64_t n = GetParam().n_ranks;
  const int64_t heads = model().kv_shard_configs()[0].n_kv_heads * n;
  ASSERT_GT(one.stats().prefix_cache_bytes, 0);
  EXPECT_EQ(split.stats().prefix_cache_pages, one.stats().prefix_cache_pages);
  EXPECT_EQ(split.stats().prefix_cache_bytes * model(1).config().n_kv_heads,
            one.stats().prefix_cache_bytes * heads);
}

INSTANTIATE_TEST_SUITE_P(Models, TpDeterminism, ::testing::ValuesIn(tp_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(TpEngine, ASizeThatDoesNotFitNamesTheHeads) {
  try {
    tp::make_tensor_parallel(load_model(kStoriesDir, {}), 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("8 attention heads, 4 KV heads"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("valid sizes: 1, 2, 4"), std::string::npos) << e.what();
  }
}

// SSD page files carry the shard count in their scheme (and so in their
// namespace): written at two ranks, they restore at two and are never seen at one.
class TpSsdTier : public SsdFolderTest {
 protected:
  TpSsdTier() : SsdFolderTest("cairn_tp_ssd_") {}
  Model& model(int n) { return case_model(fixture_dir("llama"), n); }
  void expect_layer_wise_at_two(Model& m, int64_t cut_back_cached);
};

TEST_F(TpSsdTier, PagesWrittenAtTwoRanksRestoreAtTwoAndMissAtOne) {
  Outcome want2, want1;
  {
    Engine e2(model(2), nullptr, options(false));
    want2 = collect(e2.submit(target()), log_);
    Engine e1(model(1), nullptr, options(false));
    want1 = collect(e1.submit(target()), log_);
  }
  {
    Engine first(model(2), nullptr, options(true));
    collect(first.submit(sharer()), log_);
  }  // shutdown: cached pages spill
  const std::vector<fs::path> files = page_files();
  ASSERT_GE(files.size(), 2u);
  const std::string scheme = header_of(files[0]).scheme;
  EXPECT_NE(scheme.find("|tp2"), std::string::npos) << scheme;
  {
    Engine one(model(1), nullptr, options(true));
    EXPECT_EQ(one.stats().ssd_files, 0);
    const Outcome got = collect(one.submit(target()), log_);
    EXPECT_EQ(got.final.usage.cached_tokens, 0);
    EXPECT_EQ(got.ids, want1.ids);
    EXPECT_TRUE(bit_equal_rows(got.logits, want1.logits));
  }
  Engine two(model(2), nullptr, options(true));
  EXPECT_EQ(two.stats().ssd_files, static_cast<int64_t>(files.size()));
  const Outcome got = collect(two.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 64);
  EXPECT_EQ(two.stats().ssd_restored_pages, 2);
  EXPECT_EQ(got.ids, want2.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want2.logits));
}

// Layer-wise at two ranks (one range per layer, read through staging slots
// into both shards' pages), on the llama fixture and on gemma2's sliding
// window: the restored prefix gives the computed logits, and a page whose last
// layer fails its check cuts the sequence back.
TEST_F(TpSsdTier, LayerWiseRestoresAtTwoRanksEqualComputingAndCutBack) {
  expect_layer_wise_at_two(case_model(fixture_dir("llama"), 2), 32);
  // Cut back to the start: the window let go of the first page's positions the
  // shorter sequence would need.
  expect_layer_wise_at_two(case_model(fixture_dir("gemma2"), 2), 0);
}

void TpSsdTier::expect_layer_wise_at_two(Model& m, int64_t cut_back_cached) {
  SCOPED_TRACE(m.config().path);
  Outcome want;
  {
    Engine e(m, nullptr, options(false));
    want = collect(e.submit(target()), log_);
  }
  EngineOptions o = options(true);
  o.restore_layer_ranges = 4;
  o.restore_last_range_hold_ms = 100;  // the request runs before the last ranges are checked
  for (const bool corrupt : {false, true}) {
    fs::remove_all(dir_);
    {
      Engine first(m, nullptr, options(true));
      collect(first.submit(sharer()), log_);
    }
    if (corrupt) {
      ASSERT_EQ(flip_last_layers(), 1);
    }
    Engine two(m, nullptr, o);
    const Outcome got = collect(two.submit(target()), log_);
    EXPECT_EQ(two.stats().ssd_restored_pages, corrupt ? 1 : 2);
    EXPECT_EQ(two.stats().ssd_restore_cut_backs, corrupt ? 1 : 0);
    EXPECT_EQ(got.final.usage.cached_tokens, corrupt ? cut_back_cached : 64);
    EXPECT_EQ(got.ids, want.ids);
    EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
  }
}

}  // namespace
}  // namespace cairn::test
