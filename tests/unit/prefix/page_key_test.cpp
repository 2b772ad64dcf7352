// Page keys: the documented byte layout, and what must keep keys apart.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <set>
#include <utility>
#include <vector>

#include "prefix/page_key.h"

namespace cairn {
namespace {

void put_le(std::vector<uint8_t>& out, uint64_t x, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

// XXH3-128 of (ns, parent, tokens as little-endian int32), built by hand.
TEST(PageKey, HashesTheDocumentedBytes) {
  const PageKey ns{0x0123456789abcdefull, 0xfedcba9876543210ull}, parent{7, 9};
  const std::vector<int32_t> tokens = {1, -2, 300000, 0};
  std::vector<uint8_t> bytes;
  for (uint64_t x : {ns.hi, ns.lo, parent.hi, parent.lo}) put_le(bytes, x, 8);
  for (int32_t t : tokens) put_le(bytes, static_cast<uint32_t>(t), 4);
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  const PageKey k = page_key(ns, parent, tokens);
  EXPECT_EQ(k.hi, h.high64);
  EXPECT_EQ(k.lo, h.low64);
  EXPECT_EQ(page_key(ns, parent, tokens), k);  // stable

  std::vector<uint8_t> nsb;
  for (std::string_view s : {"fp", "q8g32", "prefix"}) {
    put_le(nsb, s.size(), 8);
    nsb.insert(nsb.end(), s.begin(), s.end());
  }
  const XXH128_hash_t hn = XXH3_128bits(nsb.data(), nsb.size());
  EXPECT_EQ(namespace_key("fp", "q8g32"), (PageKey{hn.high64, hn.low64}));
}

TEST(PageKey, NamespacesDiffer) {
  const std::vector<PageKey> keys = {
      namespace_key("model-a", "f32"),   namespace_key("model-b", "f32"),
      namespace_key("model-a", "q4g32"), namespace_key("model-a", "f32", "checkpoint"),
      namespace_key("model-af", "32"),   namespace_key("", ""),
  };
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const PageKey& k : keys) {
    EXPECT_FALSE(k.empty());
    EXPECT_TRUE(seen.insert({k.hi, k.lo}).second);
  }
}

TEST(PageKey, ParentsTokensAndNamespacesDiffer) {
  const PageKey a = namespace_key("model-a", "f32"), b = namespace_key("model-b", "f32");
  const PageKey q = namespace_key("model-a", "q8g64");
  const std::vector<int32_t> t = {5, 6, 7, 8};
  const PageKey first = page_key(a, {}, t);
  const std::vector<PageKey> keys = {
      first,
      page_key(b, {}, t),
      page_key(q, {}, t),
      page_key(a, first, t),  // the same tokens one page later
      page_key(a, {}, std::vector<int32_t>{5, 6, 7, 9}),
      page_key(a, {}, std::vector<int32_t>{6, 5, 7, 8}),
      page_key(a, {}, std::vector<int32_t>{5, 6, 7}),
      page_key(a, {}, std::vector<int32_t>{}),
  };
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const PageKey& k : keys) {
    EXPECT_FALSE(k.empty());
    EXPECT_TRUE(seen.insert({k.hi, k.lo}).second);
  }
}

}  // namespace
}  // namespace cairn
