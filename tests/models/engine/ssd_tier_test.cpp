// The SSD prefix tier through the engine: pages evicted from RAM (and every
// cached page at shutdown) are written to disk; a new engine on the same folder
// restores a request's prefix from them, and its logits equal a run that
// computed everything. A corrupted file is a miss, never a wrong page. Built
// again with CAIRN_ENGINE_ON_GPU (tests/gpu/models): the engine on a GPU, its
// pages copied between device memory and the files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine_case.h"
#include "prefix/page_file.h"
#include "ssd_fixture.h"

namespace cairn::test {
namespace {

namespace fs = std::filesystem;

class SsdTierEngine : public SsdFolderTest {
 protected:
  SsdTierEngine() : SsdFolderTest("cairn_ssd_engine_") {}
  void SetUp() override {
    SsdFolderTest::SetUp();
    if (engine_device_missing()) GTEST_SKIP() << "no CUDA device";
    model_ = engine_model(fixture_dir("llama"));
  }

  Outcome computed() {
    Engine e(*model_, nullptr, options(false, 0));
    return collect(e.submit(target()), log_);
  }
  void expect_restored_equals_computed(const EngineOptions& o);
  // A byte of the second page's last layer flipped (below).
  void expect_cut_back(bool staged);

  std::unique_ptr<Model> model_;
};

// The sharer's run leaves its pages on disk at shutdown; a new engine with o
// restores them for the target, whose output equals computing everything.
void SsdTierEngine::expect_restored_equals_computed(const EngineOptions& o) {
  const Outcome want = computed();
  {
    Engine first(*model_, nullptr, options(true));
    collect(first.submit(sharer()), log_);
  }  // shutdown: cached pages spill, the queue drains
  ASSERT_GE(page_files().size(), 2u);
  Engine second(*model_, nullptr, o);
  EXPECT_GE(second.stats().ssd_files, 2);
  const Outcome got = collect(second.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 64);
  EXPECT_EQ(second.stats().ssd_restored_pages, 2);
  EXPECT_EQ(second.stats().ssd_restore_cut_backs, 0);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

// Overlapped with the rest of the prompt (the default), in as many layer
// ranges as the pages' size gives (one here), in one per layer, and in one per
// layer through staging slots (a GPU's way; on a GPU every run takes it).
TEST_F(SsdTierEngine, PrefixRestoredAfterARestartEqualsComputed) {
  expect_restored_equals_computed(options(true));
  EngineOptions o = options(true);
  o.restore_layer_ranges = 4;
  fs::remove_all(dir_);  // a fresh folder
  expect_restored_equals_computed(o);
  o.stage_restores = true;
  fs::remove_all(dir_);
  expect_restored_equals_computed(o);
}

// A sliding-window model (gemma2: every other layer sees 16 positions): pages
// of the sliding group the window had let go of are cached without bytes and
// restored as none; layer-wise, in place and through staging, the output
// equals computing.
TEST_F(SsdTierEngine, ASlidingWindowModelsPrefixRestoresLayerWise) {
  model_ = engine_model(fixture_dir("gemma2"));
  for (const bool staged : {false, true}) {
    fs::remove_all(dir_);
    EngineOptions o = options(true);
    o.restore_layer_ranges = 4;
    o.stage_restores = staged;
    expect_restored_equals_computed(o);
  }
}

// --no-restore-overlap: the same reads, the request queued once all are in.
TEST_F(SsdTierEngine, PrefixRestoredBeforeTheRequestRunsEqualsComputed) {
  EngineOptions o = options(true);
  o.restore_overlap = false;
  expect_restored_equals_computed(o);
}

// A byte of the second page's last layer flipped: its header and first layers
// pass, so the request runs over it while the rest arrives; the last layer
// fails its check, the sequence is cut back to that page and computes it.
void SsdTierEngine::expect_cut_back(bool staged) {
  const Outcome want = computed();
  {
    Engine first(*model_, nullptr, options(true));
    collect(first.submit(sharer()), log_);
  }
  const int flipped = flip_last_layers();
  ASSERT_EQ(flipped, 1);
  EngineOptions o = options(true);
  o.restore_layer_ranges = 4;  // one per layer (the fixture's small pages would get one range)
  o.stage_restores = staged;
  o.restore_last_range_hold_ms = 100;  // the request runs before the flipped range is checked
  Engine second(*model_, nullptr, o);
  const Outcome got = collect(second.submit(target()), log_);
  EXPECT_EQ(second.stats().ssd_restore_cut_backs, 1);
  EXPECT_EQ(second.stats().ssd_restored_pages, 1);
  EXPECT_EQ(second.stats().ssd_corrupt, 1);
  EXPECT_EQ(got.final.usage.cached_tokens, 32);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

TEST_F(SsdTierEngine, APageFailingInItsLastLayerCutsTheSequenceBack) {
  expect_cut_back(false);
}

// The same through staging slots: on a GPU, the device-sampled step drops the
// cut-back sequence's token.
TEST_F(SsdTierEngine, APageFailingInItsLastLayerCutsTheSequenceBackThroughStaging) {
  expect_cut_back(true);
}

TEST_F(SsdTierEngine, ACorruptPageIsAMissAndTheOutputStaysRight) {
  const Outcome want = computed();
  {
    Engine first(*model_, nullptr, options(true));
    collect(first.submit(sharer()), log_);
  }
  // Flip one payload byte (past the 4 KiB header block) of every page file:
  // nothing may be served.
  for (const fs::path& f : page_files()) {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(4096 + 100);
    char c = 0;
    io.read(&c, 1);
    io.seekp(4096 + 100);
    c = static_cast<char>(c ^ 0x20);
    io.write(&c, 1);
  }
  Engine second(*model_, nullptr, options(true));
  const Outcome got = collect(second.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 0);
  EXPECT_EQ(second.stats().ssd_restored_pages, 0);
  EXPECT_GE(second.stats().ssd_corrupt, 1);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}

TEST_F(SsdTierEngine, PagesEvictedFromRamAreSpilledAndFlushIsDurable) {
  // A RAM tier of 4 pages (f32, 4 layers × K,V × 32 positions × 2 heads × 16):
  // later prompts evict earlier ones, which spill.
  constexpr int64_t kPageBytes = 4 * 2 * 32 * 2 * 16 * 4;
  Engine e(*model_, nullptr, options(true, 4 * kPageBytes));
  for (uint32_t i = 0; i < 6; ++i)
    collect(e.submit(test_request(test_prompt(100, 50 + i, 256), 1, 0.f, i)), log_);
  const CacheFlush f = e.flush_cache(std::chrono::seconds(30));
  EXPECT_TRUE(f.durable) << f.error;
  const EngineStats s = e.stats();
  EXPECT_GT(s.spill_written, 0);
  EXPECT_EQ(s.spill_failed, 0);
  EXPECT_EQ(static_cast<int64_t>(page_files().size()), s.spill_written);
  Engine no_ssd(*model_, nullptr, options(false));
  EXPECT_FALSE(no_ssd.flush_cache(std::chrono::seconds(1)).durable);
}

#ifdef CAIRN_ENGINE_ON_GPU
// Pages computed under the fast attention products hold other bits than under the exact ones:
// their files name the arithmetic in their scheme (DeviceBackend::numerics), so an engine under
// the exact products never restores them and computes the exact run's logits (tensor-core rows:
// the head_dim-64 model).
TEST_F(SsdTierEngine, PagesOfFastAttentionNeverRestoreUnderExact) {
  Model& m = case_model(kTinyHd64Dir, 1, DeviceKind::kCuda);
  DeviceBackend& dev = device_backend(DeviceKind::kCuda);
  Outcome want;
  {
    Engine e(m, nullptr, options(false, 0));
    want = collect(e.submit(target()), log_);
  }
  dev.set_fast_attention(true);
  {
    Engine first(m, nullptr, options(true));
    collect(first.submit(sharer()), log_);
  }  // shutdown: cached pages spill
  dev.set_fast_attention(false);
  const std::vector<fs::path> files = page_files();
  ASSERT_GE(files.size(), 2u);
  const std::string scheme = header_of(files[0]).scheme;
  EXPECT_NE(scheme.find("cuda+fast-attention"), std::string::npos) << scheme;
  Engine exact(m, nullptr, options(true));
  EXPECT_EQ(exact.stats().ssd_files, 0);
  const Outcome got = collect(exact.submit(target()), log_);
  EXPECT_EQ(got.final.usage.cached_tokens, 0);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_TRUE(bit_equal_rows(got.logits, want.logits));
}
#endif

}  // namespace
}  // namespace cairn::test
