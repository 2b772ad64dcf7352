// The host-RAM tier through the engine: pages the pool's prefix tier evicts
// wait in host memory, a request whose prefix continues there gets them copied
// back (its logits equal a run that computed everything), the host tier's own
// evictions go on to the SSD tier, and at shutdown everything it holds
// reaches the disk. Built again with CAIRN_ENGINE_ON_GPU (tests/gpu/models):
// there the pool is device memory and the host tier page-locked memory.
#include <gtest/gtest.h>

#include "engine_case.h"
#include "ssd_fixture.h"

namespace cairn::test {
namespace {

// A page of the fixture's f32 KV: 4 layers × K,V × 32 positions × 2 heads × 16.
constexpr int64_t kPageBytes = 4 * 2 * 32 * 2 * 16 * 4;

class HostTierEngine : public SsdFolderTest {
 protected:
  HostTierEngine() : SsdFolderTest("cairn_host_engine_") {}
  void SetUp() override {
    SsdFolderTest::SetUp();
    if (engine_device_missing()) GTEST_SKIP() << "no CUDA device";
    model_ = engine_model(fixture_dir("llama"));
  }

  // A pool prefix tier of 4 pages, the host tier behind it.
  EngineOptions host_options(bool ssd, int64_t host_bytes) {
    EngineOptions o = options(ssd, 4 * kPageBytes);
    o.host_cache_bytes = host_bytes;
    return o;
  }
  Outcome computed() {
    Engine e(*model_, nullptr, options(false, 0));
    return collect(e.submit(target()), log_);
  }
  // Four prompts of 100 tokens (12 full pages): the sharer's pages leave the pool's tier.
  void crowd(Engine& e) {
    for (uint32_t i = 0; i < 4; ++i)
      collect(e.submit(test_request(test_prompt(100, 50 + i, 256), 1, 0.f, i)), log_);
  }

  std::unique_ptr<Model> model_;
};

TEST_F(HostTierEngine, APrefixInHostMemoryIsCopiedBackAndEqualsComputed) {
  const Outcome want = computed();
  Engine e(*model_, nullptr, host_options(false, int64_t{1} << 20));
  collect(e.submit(sharer()), log_);
  crowd(e);
  const EngineStats before = e.stats();
  EXPECT_GE(before.host_cache_pages, 2);
  EXPECT_GT(before.host_cache_bytes, 0);
  EXPECT_EQ(before.host_cache_evictions, 0);
  EXPECT_GE(before.host_write_bytes, before.host_cache_bytes);  // every record came in that way
  const Outcome got = collect(e.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 64);
  const EngineStats after = e.stats();
  EXPECT_EQ(after.host_restored_pages, 2);
  EXPECT_GT(after.host_restore_bytes, 0);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

TEST_F(HostTierEngine, ItsEvictionsGoToTheSsdTierAndComeBackFromThere) {
  const Outcome want = computed();
  Engine e(*model_, nullptr, host_options(true, kPageBytes));  // one or two pages
  collect(e.submit(sharer()), log_);
  crowd(e);
  ASSERT_TRUE(e.flush_cache(std::chrono::seconds(30)).durable);
  const EngineStats before = e.stats();
  EXPECT_GT(before.host_cache_evictions, 0);
  EXPECT_EQ(before.spill_written, before.host_cache_evictions);  // the pool spills through it
  const Outcome got = collect(e.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 64);
  EXPECT_EQ(e.stats().ssd_restored_pages, 2);
  EXPECT_EQ(e.stats().host_restored_pages, 0);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

TEST_F(HostTierEngine, WhatItHoldsReachesTheSsdTierAtShutdown) {
  const Outcome want = computed();
  {
    Engine first(*model_, nullptr, host_options(true, int64_t{1} << 20));
    collect(first.submit(sharer()), log_);
    crowd(first);
    EXPECT_EQ(first.stats().spill_written, 0);  // all of it in host memory
    EXPECT_TRUE(first.close(std::chrono::seconds(30)).durable);
  }
  Engine second(*model_, nullptr, options(true));
  const Outcome got = collect(second.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 64);
  EXPECT_EQ(second.stats().ssd_restored_pages, 2);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

}  // namespace
}  // namespace cairn::test
