// Trim, fork, export/import and pool accounting of the paged KV state.
#include <gtest/gtest.h>

#include "core/error.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

// Trimming appended positions and appending others reads exactly like never
// having appended the trimmed ones (sliding group with rollback slack too).
TEST(PagedOps, TrimThenReappendEqualsNeverAppended) {
  ModelConfig c = tiny_config({0, 8});
  for (int64_t pt : {4, 16}) {
    PagedKvState a(c, f32_options(pt, 12)), b(c, f32_options(pt, 12));
    run_step(a, c, {{0, 0, 40, 1}});
    run_step(b, c, {{0, 0, 40, 1}});
    run_step(a, c, {{0, 40, 11, 9}});  // speculative tokens, then rejected
    a.trim(0, 40);
    EXPECT_EQ(a.n_tokens(0), 40);
    ASSERT_TRUE(bit_equal(run_step(a, c, {{0, 40, 5, 2}}), run_step(b, c, {{0, 40, 5, 2}})));
    ASSERT_TRUE(bit_equal(run_step(a, c, {{0, 45, 1, 2}}), run_step(b, c, {{0, 45, 1, 2}})));
    EXPECT_LE(a.pool().used_bytes(), b.pool().used_bytes());  // a released further
  }
}

TEST(PagedOps, TrimPastTheReleasedWindowIsAnError) {
  ModelConfig c = tiny_config({8});
  PagedKvState a(c, f32_options(4, 0));
  run_step(a, c, {{0, 0, 40, 1}});
  EXPECT_THROW(a.trim(0, 10), Error);
  EXPECT_THROW(a.trim(0, 41), Error);
  EXPECT_EQ(a.n_tokens(0), 40);
}

// A fork shares the prefix's pages; each side's writes stay its own.
TEST(PagedOps, ForkSharesPagesAndWritesDoNotLeak) {
  ModelConfig c = tiny_config({0, 0});
  for (int64_t fork_at : {32, 40, 20}) {
    PagedKvState s(c, f32_options(16));
    run_step(s, c, {{0, 0, 40, 1}});
    s.fork(0, 1, fork_at);
    const auto src = s.page_ids(0, 0), dst = s.page_ids(1, 0);
    ASSERT_EQ(dst.size(), static_cast<size_t>((fork_at + 15) / 16));
    for (size_t i = 0; i < dst.size(); ++i) {
      EXPECT_EQ(dst[i], src[i]);
      EXPECT_EQ(s.pool().ref_count(s.arena_of(0, 0), dst[i]), 2);
    }
    // Independent references: slot 0 continues stream 1; slot 1 takes stream 2.
    PagedKvState r0(c, f32_options(16)), r1(c, f32_options(16));
    run_step(r0, c, {{0, 0, 40, 1}});
    run_step(r1, c, {{0, 0, fork_at, 1}});
    StepOut both = run_step(s, c, {{1, fork_at, 3, 2}, {0, 40, 3, 1}});
    StepOut a = run_step(r1, c, {{0, fork_at, 3, 2}}), b = run_step(r0, c, {{0, 40, 3, 1}});
    for (size_t il = 0; il < both.size(); ++il) {
      const size_t half = both[il].size() / 2;
      EXPECT_TRUE(bit_equal(std::vector<float>(both[il].begin(), both[il].begin() + half), a[il]));
      EXPECT_TRUE(bit_equal(std::vector<float>(both[il].begin() + half, both[il].end()), b[il]));
    }
    EXPECT_EQ(s.page_ids(1, 0)[0], s.page_ids(0, 0)[0]);  // the full first page is still shared
    s.free_sequence(0);
    s.free_sequence(1);
    EXPECT_EQ(s.pool().used_bytes(), 0);
    EXPECT_EQ(s.pool().n_used_pages(), 0);
  }
}

TEST(PagedOps, ExportImportRoundTrip) {
  ModelConfig c = tiny_config({0, 6});
  PagedKvState a(c, f32_options(8, 2)), b(c, f32_options(8, 2));
  run_step(a, c, {{0, 0, 45, 1}});
  SequenceExport e = a.export_sequence(0);
  EXPECT_EQ(e.n_tokens, 45);
  ASSERT_EQ(e.groups.size(), 2u);
  EXPECT_EQ(e.groups[0].pages.size(), 6u);
  EXPECT_LT(e.groups[1].pages.size(), 6u);  // sliding pages out of the window are gone
  b.import_sequence(3, e);
  EXPECT_EQ(b.n_tokens(3), 45);
  EXPECT_EQ(b.pool().used_bytes(), a.pool().used_bytes());
  for (int64_t p = 45; p < 60; ++p)
    ASSERT_TRUE(bit_equal(run_step(a, c, {{0, p, 1, 1}}), run_step(b, c, {{3, p, 1, 1}})));
  SequenceExport bad = a.export_sequence(0);
  bad.groups[1].window = 7;
  EXPECT_THROW(b.import_sequence(4, bad), Error);
  PagedKvState other(c, f32_options(16));
  EXPECT_THROW(other.import_sequence(0, a.export_sequence(0)), Error);
}

TEST(PagedOps, NoPageLeaksAndOutOfMemoryIsAnError) {
  ModelConfig c = tiny_config({0, 4, 0});
  PagedKvOptions o = f32_options(4, 20);
  o.budget_bytes = 200 * 1024;
  PagedKvState s(c, o);
  for (int32_t slot = 0; slot < 3; ++slot) run_step(s, c, {{slot, 0, 30, 1}});
  s.fork(1, 5, 17);
  s.trim(2, 12);
  run_step(s, c, {{5, 17, 9, 3}, {2, 12, 2, 4}});
  EXPECT_GT(s.pool().used_bytes(), 0);
  EXPECT_FALSE(s.can_append(0, 1000));
  try {
    run_step(s, c, {{0, 30, 1000, 1}});
    FAIL() << "expected kOutOfMemory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory);
  }
  for (int32_t slot : {0, 1, 2, 5}) s.free_sequence(slot);
  EXPECT_EQ(s.pool().used_bytes(), 0);
  EXPECT_EQ(s.pool().n_used_pages(), 0);
}

}  // namespace
}  // namespace cairn::test
