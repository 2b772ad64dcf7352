// Pages restored from a slower tier enter the RAM tier: with their bytes
// copied into new pool pages, or into spare pages the caller allocated before
// the reads (only those used are taken; a refused record takes none); or
// pending, their bytes still arriving (a layer-wise restore): attached like
// any page, a forward over them waits on their gate layer by layer, and they
// are neither evicted nor spilled until settled, nor ever when dropped.
#include <gtest/gtest.h>

#include <cstring>

#include "prefix/prefix_cache.h"
#include "prefix_test_util.h"

namespace cairn::test {
namespace {

// Publishes a two-page sequence, then evicts it, keeping the records (bytes owned).
std::vector<PageRecord> evicted_records(PrefixCache& cache, PagedKvState& kv,
                                        const ModelConfig& c) {
  std::vector<PageRecord> out;
  cache.set_evict_observer([&](const PageKey&, const PageRecord& r) {
    out.push_back(r);
    out.back().own();
  });
  publish_sequence(cache, kv, c, 0, {{1, 32}});
  cache.evict_all();
  cache.set_evict_observer({});
  std::reverse(out.begin(), out.end());  // leaves go first: parents first again
  return out;
}

TEST(PrefixRestore, SparePagesAreTakenAndOthersLeftToTheCaller) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  const std::vector<PageRecord> rs = evicted_records(cache, kv, c);
  ASSERT_EQ(rs.size(), 2u);
  ASSERT_EQ(kv.pool().used_bytes(), 0);
  const int32_t arena = kv.group_arena(0, false);
  std::vector<int32_t> spare{kv.allocate_page(arena)};
  const int32_t id = spare[0];
  ASSERT_GE(id, 0);
  std::vector<int32_t> wrong_size{kv.allocate_page(arena)};
  PageRecord bad = rs[1];
  bad.groups[0].bytes = bad.groups[0].bytes.first(8);
  EXPECT_FALSE(cache.insert_restored(test_ns(), bad, &wrong_size));  // refused: keeps its page
  EXPECT_GE(wrong_size[0], 0);
  ASSERT_TRUE(cache.insert_restored(test_ns(), rs[0], &spare));
  EXPECT_EQ(spare[0], -1);                               // now the entry's
  ASSERT_TRUE(cache.insert_restored(test_ns(), rs[1]));  // a page of its own
  EXPECT_EQ(std::memcmp(kv.page_data(arena, id), rs[0].groups[0].bytes.data(),
                        rs[0].groups[0].bytes.size()),
            0);
  EXPECT_EQ(cache.match(token_ids({{1, 32}}), test_ns(), 1 << 20).n_tokens, 32);
  const int64_t page = kv.pool().page_bytes(arena);
  EXPECT_EQ(kv.pool().used_bytes(), 3 * page);  // two entries and the unused spare
  kv.release_page(arena, wrong_size[0]);
  cache.clear();
  EXPECT_EQ(kv.pool().used_bytes(), 0);
}

// Counts the layers a forward waited for.
class CountingGate final : public LayerGate {
 public:
  void wait_layer(int layer) override { layers.push_back(layer); }
  void wait_all() override {}
  int64_t failed_from() const override { return -1; }
  std::vector<int> layers;
};

TEST(PrefixPending, AForwardOverPendingPagesWaitsOnEachLayer) {
  ModelConfig c = tiny_config({0, 0, 0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  const std::vector<PageRecord> rs = evicted_records(cache, kv, c);
  const int32_t arena = kv.group_arena(0, false);
  const int32_t id = kv.allocate_page(arena);
  kv.write_page(arena, id, rs[0].groups[0].bytes);  // what the restore would write
  auto gate = std::make_shared<CountingGate>();
  int observed = 0;
  cache.set_evict_observer([&](const PageKey&, const PageRecord&) { ++observed; });
  ASSERT_TRUE(
      cache.insert_pending(test_ns(), rs[0].key, rs[0].parent, rs[0].tokens, false, 0, {id}, gate));
  kv.release_page(arena, id);  // the restore's reference: the cache keeps its own
  cache.evict_all();
  EXPECT_EQ(observed, 0);  // pending: neither evicted nor spilled
  const PrefixMatch m = cache.match(token_ids({{1, 32}}), test_ns(), 1 << 20);
  ASSERT_EQ(m.n_tokens, 16);
  cache.attach(0, m);
  EXPECT_TRUE(kv.has_gates(0));
  run_step(kv, c, {{0, 16, 4, 9}});
  EXPECT_EQ(gate->layers, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(kv.take_gates(0).size(), 1u);
  EXPECT_FALSE(kv.has_gates(0));
  kv.free_sequence(0);
  cache.settle_pending(rs[0].key);
  cache.evict_all();
  EXPECT_EQ(observed, 1);  // an ordinary entry now
  EXPECT_EQ(kv.pool().used_bytes(), 0);
}

TEST(PrefixPending, ADroppedPageTakesItsSubtreeAndNothingIsSpilled) {
  ModelConfig c = tiny_config({0});
  PagedKvState kv(c, f32_options(16));
  PrefixCache cache(kv, 1 << 22);
  const std::vector<PageRecord> rs = evicted_records(cache, kv, c);
  const int32_t arena = kv.group_arena(0, false);
  auto gate = std::make_shared<CountingGate>();
  const int32_t id = kv.allocate_page(arena);
  EXPECT_FALSE(cache.insert_pending(test_ns(), rs[1].key, rs[1].parent, rs[1].tokens, false, 0,
                                    {id}, gate));  // an orphan
  ASSERT_TRUE(
      cache.insert_pending(test_ns(), rs[0].key, rs[0].parent, rs[0].tokens, false, 0, {id}, gate));
  EXPECT_FALSE(cache.insert_pending(test_ns(), rs[0].key, rs[0].parent, rs[0].tokens, false, 0,
                                    {id}, gate));  // cached already
  kv.release_page(arena, id);
  ASSERT_TRUE(cache.insert_restored(test_ns(), rs[1]));  // a child under the pending page
  int observed = 0;
  cache.set_evict_observer([&](const PageKey&, const PageRecord&) { ++observed; });
  cache.drop_pending(rs[0].key);
  EXPECT_EQ(observed, 0);
  EXPECT_EQ(cache.stats().n_entries, 0);
  EXPECT_EQ(cache.match(token_ids({{1, 32}}), test_ns(), 1 << 20).n_tokens, 0);
  EXPECT_EQ(kv.pool().used_bytes(), 0);
}

}  // namespace
}  // namespace cairn::test
