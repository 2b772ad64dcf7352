// Pages restored from a slower tier enter the RAM tier: with their bytes
// copied into new pool pages, or into spare pages the caller allocated before
// the reads (only those used are taken; a refused record takes none).
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

}  // namespace
}  // namespace cairn::test
