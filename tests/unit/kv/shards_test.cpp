// A PagedKvState sharded with a tensor-parallel model's KV heads: shards in
// lockstep (one page id names the same logical page in every shard's pool),
// logical pages read and written across shards, and shards put back in step
// after a step that only some ranks ran.
#include <gtest/gtest.h>

#include <cstring>

#include "core/error.h"
#include "kv/paged_kv.h"
#include "kv_test_util.h"

namespace cairn::test {
namespace {

// Two ranks of a 4-head, 2-KV-head model: each shard holds 2 heads and 1 KV head.
std::vector<ModelConfig> two_shards(std::vector<int32_t> windows) {
  ModelConfig c = tiny_config(std::move(windows), 2, 1);
  return {c, c};
}

PagedKvState& shard_state(PagedKvState& kv, int r) {
  return dynamic_cast<PagedKvState&>(kv.shard(r));
}

// One forward step as the ranks run it: every shard gets the batch, rank r
// its own content (stream + r).
void step_all(PagedKvState& kv, const ModelConfig& c, std::vector<SpanSpec> spans) {
  for (int r = 0; r < kv.n_shards(); ++r) {
    std::vector<SpanSpec> mine = spans;
    for (SpanSpec& s : mine) s.stream += static_cast<uint32_t>(100 * r);
    run_step(kv.shard(r), c, mine);
  }
}

void expect_same_tables(PagedKvState& kv, int32_t n_slots) {
  for (int r = 1; r < kv.n_shards(); ++r) {
    PagedKvState& other = shard_state(kv, r);
    EXPECT_EQ(other.pool().used_bytes(), kv.pool().used_bytes()) << "shard " << r;
    for (int32_t slot = 0; slot < n_slots; ++slot) {
      EXPECT_EQ(other.n_tokens(slot), kv.n_tokens(slot)) << "slot " << slot;
      for (int g = 0; g < static_cast<int>(kv.groups().size()); ++g)
        EXPECT_EQ(other.page_ids(slot, g), kv.page_ids(slot, g)) << "slot " << slot;
    }
  }
}

TEST(KvShards, EveryOperationKeepsTheShardsInStep) {
  const std::vector<ModelConfig> cs = two_shards({0, 48});
  PagedKvState kv(cs, f32_options(16));
  ASSERT_EQ(kv.n_shards(), 2);
  step_all(kv, cs[0], {{0, 0, 70, 1}, {1, 0, 20, 2}});
  expect_same_tables(kv, 2);
  kv.fork(0, 2, 70);
  kv.adopt(3, {{kv.page_ids(1, 0)[0]}, {kv.page_ids(1, 1)[0]}}, 16, false, 0);
  kv.trim(1, 10);
  step_all(kv, cs[0], {{2, 70, 9, 3}, {1, 10, 30, 4}, {3, 16, 1, 5}});
  const int32_t arena = kv.group_arena(0, false);
  const int32_t page = kv.allocate_page(arena);
  kv.retain_page(arena, page);
  kv.release_page(arena, page);
  expect_same_tables(kv, 4);
  EXPECT_EQ(shard_state(kv, 1).pool().ref_count(arena, page), 1);
  kv.release_page(arena, page);
  for (int32_t slot = 0; slot < 4; ++slot) kv.free_sequence(slot);
  EXPECT_EQ(kv.pool().used_bytes(), 0);
  EXPECT_EQ(shard_state(kv, 1).pool().used_bytes(), 0);
}

TEST(KvShards, ALogicalPageIsEveryShardsBytesInRankOrder) {
  const std::vector<ModelConfig> cs = two_shards({0});
  PagedKvState kv(cs, f32_options(8));
  step_all(kv, cs[0], {{0, 0, 8, 1}});
  const int32_t a = kv.arena_of(0, 0), id = kv.page_ids(0, 0)[0];
  const auto n = static_cast<size_t>(kv.pool().page_bytes(a));
  ASSERT_EQ(kv.logical_page_bytes(a), static_cast<int64_t>(2 * n));
  std::vector<uint8_t> page(2 * n);
  kv.read_page(a, id, page);
  EXPECT_EQ(std::memcmp(page.data(), kv.page_data(a, id), n), 0);
  EXPECT_EQ(std::memcmp(page.data() + n, shard_state(kv, 1).page_data(a, id), n), 0);
  EXPECT_NE(std::memcmp(page.data(), page.data() + n, n), 0);  // the shards' heads differ
  const int32_t copy = kv.allocate_page(a);
  kv.write_page(a, copy, page);
  std::vector<uint8_t> back(2 * n);
  kv.read_page(a, copy, back);
  EXPECT_EQ(back, page);
}

// A step that rank 0 ran and rank 1 did not (a rank failed part way), then
// its sequence freed: the shards' free lists differ, and only resync_shards
// makes the ids they hand out agree again. Page 0 stays held (a cache's).
void diverge(PagedKvState& kv, const ModelConfig& c) {
  step_all(kv, c, {{0, 0, 20, 1}});
  kv.retain_page(kv.arena_of(0, 0), kv.page_ids(0, 0)[0]);
  run_step(kv.shard(0), c, {{1, 0, 30, 2}});  // rank 0 only
  kv.free_sequence(1);
  kv.free_sequence(0);
}

TEST(KvShards, ShardsOutOfStepAreCaughtAtAllocation) {
  const std::vector<ModelConfig> cs = two_shards({0});
  PagedKvState kv(cs, f32_options(8));
  diverge(kv, cs[0]);
  const int32_t a = kv.group_arena(0, false);
  EXPECT_THROW(
      {
        for (int i = 0; i < 4; ++i) kv.allocate_page(a);
      },
      Error);
}

TEST(KvShards, ResyncPutsTheShardsBackInStep) {
  const std::vector<ModelConfig> cs = two_shards({0});
  PagedKvState kv(cs, f32_options(8));
  diverge(kv, cs[0]);
  const int32_t a = kv.group_arena(0, false);
  std::vector<uint8_t> held(static_cast<size_t>(kv.logical_page_bytes(a))), after(held.size());
  kv.read_page(a, 0, held);
  kv.resync_shards();
  kv.read_page(a, 0, after);
  EXPECT_EQ(after, held);  // the held page keeps every shard's bytes
  step_all(kv, cs[0], {{2, 0, 40, 3}});
  expect_same_tables(kv, 3);
  for (int i = 0; i < 8; ++i) EXPECT_GE(kv.allocate_page(a), 0);
}

TEST(KvShards, ResyncRefusesShardsWhoseLivePagesDiffer) {
  const std::vector<ModelConfig> cs = two_shards({0});
  PagedKvState kv(cs, f32_options(8));
  run_step(kv.shard(0), cs[0], {{0, 0, 30, 2}});  // a sequence rank 1 never saw, still held
  try {
    kv.resync_shards();
    FAIL() << "resynced";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
  }
}

TEST(KvShards, ShardsOfDifferentShapesAreRefused) {
  ModelConfig a = tiny_config({0}, 2, 1), b = tiny_config({0}, 2, 2);
  EXPECT_THROW(PagedKvState({a, b}, f32_options(8)), Error);
  EXPECT_THROW(PagedKvState(std::vector<ModelConfig>{}, f32_options(8)), Error);
  PagedKvState kv({a, a}, f32_options(8));
  SequenceExport e;
  try {
    kv.import_sequence(0, e);
    FAIL() << "import into a sharded state";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::kUnsupported);
  }
}

TEST(KvShards, EachShardsPoolIsOnItsDevice) {
  const std::vector<ModelConfig> cs = two_shards({0});
  PagedKvOptions o = f32_options(8);
  o.shard_devices = {Device::cpu(), Device::cpu()};
  PagedKvState kv(cs, o);
  for (int r = 0; r < 2; ++r) EXPECT_EQ(kv.shard_pool(r).device(), Device::cpu());
  step_all(kv, cs[0], {{0, 0, 20, 1}});
  expect_same_tables(kv, 1);
  kv.wait_copies();  // every shard's (host pools: nothing to wait for)
  for (const std::vector<Device>& bad :
       {std::vector<Device>{Device::cpu()},  // one device for two shards
        std::vector<Device>{Device{DeviceKind::kCuda, 0}, Device::cpu()}}) {  // not o.device
    o.shard_devices = bad;
    try {
      PagedKvState refused(cs, o);
      FAIL() << "shard devices of " << bad.size() << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace cairn::test
