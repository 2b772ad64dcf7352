// Generation checkpoint files in memory: round trips, and every change to a
// file (each byte flipped, each cut, another version, model or key) is refused
// with its reason.
#include <gtest/gtest.h>

#include <cstring>

#include "checkpoint_test_util.h"

namespace cairn {
namespace {

TEST(CheckpointFile, RoundTripsWithAndWithoutLogprobs) {
  std::mt19937 rng(1);
  const TierNamespace ns = test::checkpoint_ns();
  for (bool logprobs : {true, false})
    for (int64_t step : {1, 7, 40}) {
      const Checkpoint c = test::make_checkpoint(rng, PageKey{3, 4}, 21, step, logprobs);
      std::vector<uint8_t> f;
      encode_checkpoint_file(c, ns, f);
      Checkpoint back;
      const PageFileCheck r = decode_checkpoint_file(f, ns.key(), c.key, back);
      ASSERT_TRUE(r.ok()) << page_file_error_name(r.error) << ": " << r.detail;
      test::expect_same(c, back);
      EXPECT_EQ(back.step(), step);
      EXPECT_EQ(back.tokens.back(), c.tokens.back());  // the pending token
    }
}

TEST(CheckpointFile, AnyExpectedKeyWhenNoneIsGiven) {
  std::mt19937 rng(2);
  const TierNamespace ns = test::checkpoint_ns();
  const Checkpoint c = test::make_checkpoint(rng, PageKey{5, 6}, 9, 3);
  std::vector<uint8_t> f;
  encode_checkpoint_file(c, ns, f);
  Checkpoint back;
  EXPECT_TRUE(decode_checkpoint_file(f, ns.key(), PageKey{}, back).ok());
  EXPECT_EQ(back.key, c.key);
}

struct Encoded {
  TierNamespace ns = test::checkpoint_ns();
  Checkpoint c;
  std::vector<uint8_t> f;
  Encoded() {
    std::mt19937 rng(3);
    c = test::make_checkpoint(rng, PageKey{7, 8}, 40, 12);
    encode_checkpoint_file(c, ns, f);
  }
  PageFileCheck decode(const std::vector<uint8_t>& bytes) const {
    Checkpoint out;
    return decode_checkpoint_file(bytes, ns.key(), c.key, out);
  }
};

TEST(CheckpointFile, EveryFlippedBitIsRefused) {
  const Encoded e;
  ASSERT_TRUE(e.decode(e.f).ok());
  int refused = 0;
  for (size_t at = 0; at < e.f.size(); ++at)
    for (uint8_t mask : {0x01, 0x80}) {
      std::vector<uint8_t> g = e.f;
      g[at] ^= mask;
      const PageFileCheck r = e.decode(g);
      EXPECT_FALSE(r.ok()) << "byte " << at << " mask " << int{mask};
      refused += !r.ok();
    }
  EXPECT_EQ(refused, static_cast<int>(2 * e.f.size()));
}

TEST(CheckpointFile, EveryCutIsRefused) {
  const Encoded e;
  for (size_t n = 0; n < e.f.size(); ++n) {
    const std::vector<uint8_t> g(e.f.begin(), e.f.begin() + static_cast<ptrdiff_t>(n));
    const PageFileCheck r = e.decode(g);
    EXPECT_FALSE(r.ok()) << "cut at " << n;
    EXPECT_EQ(r.error, PageFileError::kTruncated) << "cut at " << n << ": " << r.detail;
  }
  std::vector<uint8_t> longer = e.f;
  longer.push_back(0);
  EXPECT_EQ(e.decode(longer).error, PageFileError::kBadHeader);
}

TEST(CheckpointFile, ReasonsForVersionModelKeyAndMagic) {
  const Encoded e;
  std::vector<uint8_t> g = e.f;
  const uint32_t v2 = 2;
  std::memcpy(g.data() + 8, &v2, 4);  // checked before any checksum: says what it is
  EXPECT_EQ(e.decode(g).error, PageFileError::kBadVersion);
  g = e.f;
  g[0] = 'X';
  EXPECT_EQ(e.decode(g).error, PageFileError::kBadMagic);
  g = e.f;
  g[60] ^= 1;  // the step: covered by the header checksum
  EXPECT_EQ(e.decode(g).error, PageFileError::kHeaderChecksum);
  g = e.f;
  g[g.size() - 20] ^= 1;  // the body: covered by the file checksum
  EXPECT_EQ(e.decode(g).error, PageFileError::kPayloadChecksum);

  std::vector<uint8_t> other;  // another model's checkpoint of the same request
  encode_checkpoint_file(e.c, test::checkpoint_ns("model-b"), other);
  EXPECT_EQ(e.decode(other).error, PageFileError::kWrongNamespace);
  std::vector<uint8_t> prefix_tag;  // the same model, another tag
  encode_checkpoint_file(e.c, test::test_ns(), prefix_tag);
  EXPECT_EQ(e.decode(prefix_tag).error, PageFileError::kWrongNamespace);
  Checkpoint out;
  EXPECT_EQ(decode_checkpoint_file(e.f, e.ns.key(), PageKey{1, 1}, out).error,
            PageFileError::kWrongKey);
}

TEST(CheckpointFile, APageFileIsNotACheckpoint) {
  std::mt19937 rng(4);
  const TierNamespace ns = test::test_ns();
  const std::vector<uint8_t> page = encode_page_file(test::make_record(rng, ns, PageKey{}), ns);
  Checkpoint out;
  EXPECT_EQ(decode_checkpoint_file(page, ns.key(), PageKey{}, out).error, PageFileError::kBadMagic);
}

}  // namespace
}  // namespace cairn
