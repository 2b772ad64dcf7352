// The scheduler without a model: plans applied to a real PagedKvState through
// the model-free attention driver, sampling replaced by appending a token.
#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <memory>

#include "../kv/kv_test_util.h"
#include "core/error.h"
#include "sched/batch_builder.h"

namespace cairn::test {
namespace {

constexpr int64_t kPageTokens = 4;
// One f32 page of tiny_config({0, 0}): 2 layers · K,V · 4 tokens · 2 heads · 32 · 4 bytes.
constexpr int64_t kPageBytes = 2 * 2 * kPageTokens * 2 * 32 * 4;

struct Harness {
  ModelConfig config = tiny_config({0, 0});
  std::unique_ptr<PagedKvState> kv;
  std::unique_ptr<PagedKvBudget> budget;
  Scheduler sched;
  std::vector<std::unique_ptr<Sequence>> seqs;

  Harness(int64_t n_pages, SchedulerOptions o, KvQuantScheme quant = {}) : sched(o) {
    PagedKvOptions ko = f32_options(kPageTokens);
    ko.budget_bytes = n_pages * kPageBytes;
    ko.quant = std::move(quant);
    kv = std::make_unique<PagedKvState>(config, ko);
    budget = std::make_unique<PagedKvBudget>(*kv, nullptr, PageKey{1, 1}, PageKey{1, 1});
  }

  Sequence* add(int64_t n_prompt, int32_t max_tokens = 100) {
    auto s = std::make_unique<Sequence>();
    s->id = s->arrival = seqs.size() + 1;
    s->request.max_tokens = max_tokens;
    s->tokens.assign(static_cast<size_t>(n_prompt), 7);
    s->n_prompt = n_prompt;
    sched.enqueue(s.get());
    seqs.push_back(std::move(s));
    return seqs.back().get();
  }

  // Plans and applies one step; sampled chunks grow their sequence by a token.
  StepPlan step() {
    StepPlan plan = sched.plan(*budget);
    for (Sequence* s : plan.preempted) kv->free_sequence(s->slot);
    for (Sequence* s : plan.failed) kv->free_sequence(s->slot);
    sched.commit(plan);
    std::vector<SpanSpec> spans;
    for (const ChunkPlan& c : plan.chunks)
      spans.push_back({c.seq->slot, c.begin, c.n, static_cast<uint32_t>(c.seq->id)});
    if (!spans.empty()) run_step(*kv, config, spans);
    for (const ChunkPlan& c : plan.chunks)
      if (c.sample) c.seq->tokens.push_back(9);
    return plan;
  }

  void finish(Sequence* s) {
    kv->free_sequence(s->slot);
    sched.remove(s);
  }
};

SchedulerOptions opts(int64_t max_batch_tokens, int32_t max_seqs, int32_t max_queue = 16) {
  return {max_batch_tokens, max_seqs, max_queue, kPageTokens};
}

TEST(Scheduler, AdmitsInArrivalOrderUpToMaxSeqs) {
  Harness h(64, opts(64, 2));
  Sequence* a = h.add(5);
  Sequence* b = h.add(6);
  Sequence* c = h.add(3);
  StepPlan p = h.step();
  ASSERT_EQ(p.admitted.size(), 2u);
  EXPECT_EQ(p.admitted[0].seq, a);
  EXPECT_EQ(p.admitted[1].seq, b);
  EXPECT_EQ(c->state, SeqState::kWaiting);
  EXPECT_NE(a->slot, b->slot);
  h.finish(a);
  p = h.step();
  ASSERT_EQ(p.admitted.size(), 1u);
  EXPECT_EQ(p.admitted[0].seq, c);
  EXPECT_EQ(c->slot, 0);  // a's slot, given back
}

TEST(Scheduler, ChunksPrefillUnderTheTokenBudgetThenDecodesOneTokenPerStep) {
  Harness h(64, opts(8, 2));
  Sequence* a = h.add(20);
  std::vector<int64_t> sizes;
  std::vector<bool> sampled;
  for (int i = 0; i < 5; ++i) {
    StepPlan p = h.step();
    ASSERT_EQ(p.chunks.size(), 1u);
    sizes.push_back(p.chunks[0].n);
    sampled.push_back(p.chunks[0].sample);
    EXPECT_LE(p.n_tokens, 8);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{8, 8, 4, 1, 1}));
  EXPECT_EQ(sampled, (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(a->n_computed, 22);
  EXPECT_EQ(h.kv->n_tokens(a->slot), 22);
}

TEST(Scheduler, DecodeTokensGoFirstAndPrefillTakesTheRest) {
  Harness h(64, opts(8, 2));
  Sequence* a = h.add(3);
  h.step();  // a's prompt, sampled
  Sequence* b = h.add(20);
  StepPlan p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[0].seq, a);
  EXPECT_EQ(p.chunks[0].n, 1);
  EXPECT_EQ(p.chunks[1].seq, b);
  EXPECT_EQ(p.chunks[1].n, 7);
  ForwardBatch batch = build_batch(p);
  ASSERT_EQ(batch.n_tokens(), 8);
  EXPECT_EQ(batch.positions[0], 3);  // a's sampled token
  EXPECT_EQ(batch.positions[1], 0);  // b's first
  EXPECT_EQ(batch.spans[1].token_begin, 1);
  EXPECT_FALSE(batch.spans[1].want_logits);
}

TEST(Scheduler, PrefillChunksEndAtTheQuantizationStart) {
  KvQuantScheme q = uniform_scheme(tiny_config({0, 0}), 8, 32, 6);
  Harness h(64, opts(64, 2), q);
  h.add(20);
  StepPlan p = h.step();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].n, 6);
  EXPECT_TRUE(h.kv->is_quantized(p.chunks[0].seq->slot));
  p = h.step();
  EXPECT_EQ(p.chunks[0].n, 14);
}

TEST(Scheduler, AdmissionWaitsForProjectedBytesInFifoOrder) {
  Harness h(4, opts(64, 4));  // 16 positions of KV
  Sequence* a = h.add(8);     // 2 pages + 1 reserved
  Sequence* b = h.add(8);     // would need 3 more: waits
  Sequence* c = h.add(1);     // would fit, but FIFO: waits behind b
  StepPlan p = h.step();
  ASSERT_EQ(p.admitted.size(), 1u);
  EXPECT_EQ(p.admitted[0].seq, a);
  EXPECT_EQ(b->state, SeqState::kWaiting);
  EXPECT_EQ(c->state, SeqState::kWaiting);
}

TEST(Scheduler, PreemptsTheNewestWhenPagesRunOutAndRecomputesItLater) {
  Harness h(5, opts(64, 2));  // 20 positions; a third sequence waits
  Sequence* a = h.add(7, 100);
  Sequence* b = h.add(3, 100);
  Sequence* late = nullptr;
  int64_t preempted_at = -1;
  for (int i = 0; i < 20 && preempted_at < 0; ++i) {
    StepPlan p = h.step();
    if (!p.preempted.empty()) {
      ASSERT_EQ(p.preempted[0], b);  // the newest yields, the oldest runs on
      EXPECT_TRUE(p.failed.empty());
      preempted_at = i;
    }
    if (i == 1) late = h.add(2);
  }
  ASSERT_GE(preempted_at, 0);
  EXPECT_EQ(b->state, SeqState::kWaiting);
  EXPECT_EQ(b->n_computed, 0);
  EXPECT_EQ(b->slot, -1);
  EXPECT_EQ(h.sched.waiting().front(), b);  // ahead of the later arrival
  EXPECT_EQ(a->state, SeqState::kRunning);
  const int64_t b_tokens = static_cast<int64_t>(b->tokens.size());
  h.finish(a);
  StepPlan p = h.step();
  ASSERT_FALSE(p.admitted.empty());
  EXPECT_EQ(p.admitted[0].seq, b);
  EXPECT_EQ(p.chunks[0].begin, 0);  // recomputes its prompt and sampled tokens
  EXPECT_EQ(p.chunks[0].n, b_tokens);
  EXPECT_TRUE(p.chunks[0].sample);
  EXPECT_NE(late, nullptr);
}

TEST(Scheduler, FailsASequenceForMemoryOnlyWhenItRunsAlone) {
  Harness h(2, opts(64, 4));  // 8 positions
  Sequence* a = h.add(3, 100);
  StepPlan p;
  for (int i = 0; i < 10 && p.failed.empty(); ++i) p = h.step();
  ASSERT_EQ(p.failed.size(), 1u);
  EXPECT_EQ(p.failed[0], a);
  EXPECT_EQ(a->state, SeqState::kFinished);
  EXPECT_EQ(h.kv->pool().used_bytes(), 0);
}

TEST(Scheduler, CancellingMidPrefillAndMidDecodeFreesEveryPage) {
  Harness h(64, opts(8, 4));
  Sequence* b = h.add(2);
  Sequence* a = h.add(30);  // still in prefill after two steps
  h.step();
  h.step();
  EXPECT_LT(a->n_computed, a->n_prompt);
  EXPECT_GT(b->n_generated(), 0);  // decoding
  EXPECT_GT(h.kv->pool().used_bytes(), 0);
  h.finish(a);
  h.finish(b);
  EXPECT_EQ(h.kv->pool().used_bytes(), 0);
  EXPECT_TRUE(h.sched.running().empty());
  EXPECT_TRUE(h.step().empty());
}

TEST(Scheduler, QueueCapAndOptionChecks) {
  Harness h(64, opts(64, 1, 2));
  h.add(3);
  EXPECT_TRUE(h.sched.can_enqueue());
  h.add(3);
  EXPECT_FALSE(h.sched.can_enqueue());
  EXPECT_THROW(Scheduler(SchedulerOptions{4, 8, 16, 4}), Error);
  EXPECT_THROW(Scheduler(SchedulerOptions{64, 0, 16, 4}), Error);
}

}  // namespace
}  // namespace cairn::test
