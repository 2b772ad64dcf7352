// Generation checkpoints through the engine on stories260K (and the qwen3
// fixture with 8-bit KV): a generation
// interrupted at several points (its checkpoint directory copied as a crash
// would leave it, or cancelled) and resumed by an identical request in a new
// engine gives the tokens, logprobs and logits of an uninterrupted run — greedy,
// seeded, and with a seed the engine chose. A finished generation is never
// resumed; a corrupt checkpoint is a miss and the output stays right. Built
// again with CAIRN_ENGINE_ON_GPU (tests/gpu/models): the engine on a GPU, its
// pages copied from device memory into checkpoints and back.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "engine_case.h"
#include "engine_test_util.h"
#include "model/tp/tensor_parallel_model.h"

namespace cairn::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr int32_t kEvery = 4;  // --generation-checkpoint

class CheckpointEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (engine_device_missing()) GTEST_SKIP() << "no CUDA device";
    root_ = fs::temp_directory_path() / ("cairn_ckpt_engine_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    model_ = engine_model(kStoriesDir);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  // Checkpoints (and the SSD tier) in dir; `on_row(id, n)` sees the n-th row
  // of logits each request samples from (n from 1), on the engine thread.
  EngineOptions options(const fs::path& dir, std::function<void(uint64_t, size_t)> on_row = {}) {
    EngineOptions o;
    o.max_seqs = 4;
    o.prefix_cache_bytes = int64_t{16} << 20;
    o.model_fingerprint = "stories260K";
    o.kv.bits = kv_bits_;
    o.kv.quant_start = kv_bits_ > 0 ? 40 : 0;
    o.kv.group_size = 32;
    if (!dir.empty()) {
      o.ssd_cache_dir = dir.string();
      o.generation_checkpoint_tokens = kEvery;
    }
    o.logits_observer = [this, on_row](uint64_t id, std::span<const float> l) {
      size_t n = 0;
      {
        std::lock_guard<std::mutex> lock(log_.mu);
        log_.rows[id].emplace_back(l.begin(), l.end());
        n = log_.rows[id].size();
      }
      if (on_row) on_row(id, n);
    };
    return o;
  }
  Request target(float temperature, std::optional<uint64_t> seed = 42) {
    Request r = test_request(test_prompt(70, 3, model_->config().vocab_size), 60, temperature, 0);
    r.seed = seed;
    return r;
  }
  Outcome uninterrupted(const Request& r) {
    Engine e(*model_, nullptr, options({}));
    return collect(e.submit(r), log_);
  }
  // Runs r in an engine on dir; at its k-th sampled row (k - 1 tokens emitted)
  // waits for the checkpoint queue and copies dir to `crash`: what a kill -9
  // then would leave behind. The run itself goes on to its end.
  void snapshot_at(const Request& r, size_t k, const fs::path& dir, const fs::path& crash) {
    Engine* engine = nullptr;
    Engine e(*model_, nullptr, options(dir, [&](uint64_t, size_t n) {
      if (n != k) return;
      engine->flush_cache(30s);
      fs::copy(dir, crash, fs::copy_options::recursive);
    }));
    engine = &e;
    collect(e.submit(r), log_);
  }
  // Resumes r in a new engine on dir: the outcome, how many tokens were
  // replayed (emitted without a row of logits), and the engine's counters.
  Outcome resume(const Request& r, const fs::path& dir, size_t& replayed, EngineStats& st,
                 uint64_t* seed = nullptr) {
    Engine e(*model_, nullptr, options(dir));
    auto s = e.submit(r);
    if (seed) *seed = s->seed();
    Outcome o = collect(s, log_);
    replayed = o.ids.size() - o.logits.size();
    st = e.stats();
    return o;
  }
  static std::vector<fs::path> files(const fs::path& dir, const std::string& ext) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().extension() == ext) out.push_back(e.path());
    return out;
  }
  // The resumed run equals the uninterrupted one: ids, logprobs, and the logits
  // of every step it computed (the last n rows of the uninterrupted run).
  static void expect_same_run(const Outcome& want, const Outcome& got) {
    EXPECT_EQ(got.ids, want.ids);
    ASSERT_EQ(got.final.tokens.size(), want.final.tokens.size());
    for (size_t i = 0; i < want.final.tokens.size(); ++i) {
      EXPECT_EQ(got.final.tokens[i].logprob, want.final.tokens[i].logprob) << i;
      ASSERT_EQ(got.final.tokens[i].top.size(), want.final.tokens[i].top.size()) << i;
      for (size_t j = 0; j < want.final.tokens[i].top.size(); ++j)
        EXPECT_EQ(got.final.tokens[i].top[j].id, want.final.tokens[i].top[j].id) << i;
    }
    EXPECT_EQ(got.final.finish, want.final.finish);
    ASSERT_LE(got.logits.size(), want.logits.size());
    const std::vector<std::vector<float>> tail(want.logits.end() - got.logits.size(),
                                               want.logits.end());
    EXPECT_TRUE(bit_equal_rows(got.logits, tail));
  }

  int32_t kv_bits_ = 0;
  fs::path root_;
  std::unique_ptr<Model> model_;
  LogitsLog log_;
};

TEST_F(CheckpointEngine, ResumedAfterACrashEqualsUninterrupted) {
  for (float temperature : {0.0f, 0.9f}) {
    const Request r = target(temperature);
    const Outcome want = uninterrupted(r);
    ASSERT_EQ(want.ids.size(), 60u);
    for (size_t k : {6, 17, 45}) {  // checkpoints at steps 4, 16 and 44
      SCOPED_TRACE(testing::Message() << "temperature " << temperature << ", row " << k);
      const fs::path dir = root_ / "run", crash = root_ / "crash";
      snapshot_at(r, k, dir, crash);
      EXPECT_TRUE(files(dir, ".ckpt").empty());     // the finished run removed its checkpoints
      ASSERT_EQ(files(crash, ".ckpt").size(), 1u);  // the newest one only
      size_t replayed = 0;
      EngineStats st;
      const Outcome got = resume(r, crash, replayed, st);
      EXPECT_EQ(replayed, (k - 1) / kEvery * kEvery);
      EXPECT_EQ(st.checkpoints_resumed, 1);
      EXPECT_GE(st.ssd_restored_pages, 2);  // the prompt's pages, and more later on
      expect_same_run(want, got);
      EXPECT_TRUE(files(crash, ".ckpt").empty());
      fs::remove_all(dir), fs::remove_all(crash);
    }
  }
}

// 8-bit KV from position 40 (the qwen3 fixture: head_dim 32): the pages
// checkpointed are the quantized ones.
TEST_F(CheckpointEngine, QuantizedKvResumesToo) {
  model_ = engine_model(fixture_dir("qwen3"));
  kv_bits_ = 8;
  const Request r = target(0.9f);
  const Outcome want = uninterrupted(r);
  const fs::path dir = root_ / "run", crash = root_ / "crash";
  snapshot_at(r, 39, dir, crash);
  size_t replayed = 0;
  EngineStats st;
  const Outcome got = resume(r, crash, replayed, st);
  EXPECT_EQ(replayed, 36u);
  EXPECT_EQ(st.checkpoints_resumed, 1);
  EXPECT_GE(st.ssd_restored_pages, 3);
  expect_same_run(want, got);
}

// Two tensor-parallel ranks: the checkpoint's pages hold both KV shards and
// resume at two ranks; one rank never takes them (another KV scheme).
TEST_F(CheckpointEngine, TensorParallelResumesAtItsOwnSizeOnly) {
#ifdef CAIRN_ENGINE_ON_GPU
  GTEST_SKIP() << "tensor-parallel ranks run on CPU threads";
#endif
  model_ = tp::make_tensor_parallel(load_model(kStoriesDir, {}), 2);
  const Request r = target(0.9f);
  const Outcome want = uninterrupted(r);
  const fs::path dir = root_ / "run", crash = root_ / "crash";
  snapshot_at(r, 17, dir, crash);
  ASSERT_EQ(files(crash, ".ckpt").size(), 1u);
  const fs::path copy = root_ / "copy";
  fs::copy(crash, copy, fs::copy_options::recursive);
  size_t replayed = 0;
  EngineStats st;
  const Outcome got = resume(r, crash, replayed, st);
  EXPECT_EQ(replayed, 16u);
  EXPECT_EQ(st.checkpoints_resumed, 1);
  EXPECT_GE(st.ssd_restored_pages, 2);
  expect_same_run(want, got);
  model_ = load_model(kStoriesDir, {});
  const Outcome one = uninterrupted(r);
  const Outcome at_one = resume(r, copy, replayed, st);
  EXPECT_EQ(st.checkpoints_resumed, 0);
  EXPECT_EQ(replayed, 0u);
  expect_same_run(one, at_one);
}

TEST_F(CheckpointEngine, ACancelKeepsTheCheckpointAtTheStepReached) {
  const Request r = target(0.9f);
  const Outcome want = uninterrupted(r);
  const fs::path dir = root_ / "run";
  {
    Engine* engine = nullptr;
    Engine e(*model_, nullptr, options(dir, [&](uint64_t id, size_t n) {
      if (n == 23) engine->cancel(id);  // applied after token 23 is emitted
    }));
    engine = &e;
    EXPECT_EQ(collect(e.submit(r), log_).final.finish, FinishReason::kCancelled);
  }
  ASSERT_EQ(files(dir, ".ckpt").size(), 1u);
  size_t replayed = 0;
  EngineStats st;
  const Outcome got = resume(r, dir, replayed, st);
  EXPECT_EQ(replayed, 23u);
  expect_same_run(want, got);
}

TEST_F(CheckpointEngine, AServerChosenSeedIsResumedWithTheSeedItHad) {
  Request r = target(1.0f, std::nullopt);  // no seed: the engine chooses one
  const fs::path dir = root_ / "run", crash = root_ / "crash";
  snapshot_at(r, 14, dir, crash);
  size_t replayed = 0;
  EngineStats st;
  uint64_t seed = 0;
  const Outcome got = resume(r, crash, replayed, st, &seed);
  EXPECT_EQ(replayed, 12u);
  EXPECT_EQ(st.checkpoints_resumed, 1);
  Request explicit_seed = r;
  explicit_seed.seed = seed;  // the seed the answer reports reproduces it
  expect_same_run(uninterrupted(explicit_seed), got);
  // Finished: an identical request starts afresh, with a seed of its own.
  Engine e(*model_, nullptr, options(crash));
  auto again = e.submit(r);
  EXPECT_NE(again->seed(), seed);
  again->collect();
  EXPECT_EQ(e.stats().checkpoints_resumed, 0);
}

TEST_F(CheckpointEngine, AFinishedGenerationIsNeverResumed) {
  const Request r = target(0.9f);
  const fs::path dir = root_ / "run";
  {
    Engine e(*model_, nullptr, options(dir));
    EXPECT_EQ(collect(e.submit(r), log_).ids.size(), 60u);
    EXPECT_GE(e.stats().checkpoints_written, 1);
    EXPECT_EQ(e.stats().checkpoint_files, 0);  // removed before the answer was given
  }
  EXPECT_TRUE(files(dir, ".ckpt").empty());
  size_t replayed = 0;
  EngineStats st;
  const Outcome got = resume(r, dir, replayed, st);
  EXPECT_EQ(replayed, 0u);  // every token computed again
  EXPECT_EQ(got.ids.size(), 60u);
  EXPECT_EQ(st.checkpoints_resumed, 0);
}

TEST_F(CheckpointEngine, ACorruptCheckpointIsAMissAndTheOutputStaysRight) {
  const Request r = target(0.9f);
  const Outcome want = uninterrupted(r);
  const fs::path dir = root_ / "run", crash = root_ / "crash";
  snapshot_at(r, 30, dir, crash);
  const std::vector<fs::path> ck = files(crash, ".ckpt");
  ASSERT_EQ(ck.size(), 1u);
  {
    std::fstream io(ck[0], std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(200);
    io.put('\x7f');
  }
  size_t replayed = 0;
  EngineStats st;
  const Outcome got = resume(r, crash, replayed, st);
  EXPECT_EQ(replayed, 0u);
  EXPECT_EQ(st.checkpoints_resumed, 0);
  EXPECT_EQ(st.checkpoints_corrupt, 1);
  expect_same_run(want, got);
}

TEST_F(CheckpointEngine, CheckpointsNeedAFolder) {
  EngineOptions o = options({});
  o.generation_checkpoint_tokens = 8;
  EXPECT_THROW(Engine(*model_, nullptr, o), Error);
}

}  // namespace
}  // namespace cairn::test
