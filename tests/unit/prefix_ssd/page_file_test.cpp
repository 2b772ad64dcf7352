// Page files in memory: round trips and every check a file must pass.
#include <gtest/gtest.h>

#include <cstring>

#include "prefix/page_file.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

using test::make_record;
using test::RecordShape;

PageFileCheck decode(const std::vector<uint8_t>& f, const TierNamespace& ns, const PageKey& key,
                     PageRecord& out) {
  return decode_page_file(f, ns.key(), key, out);
}

TEST(PageFile, RoundTripsFullPrecisionQuantizedAndSlidingPages) {
  std::mt19937 rng(1);
  const TierNamespace ns = test::test_ns();
  RecordShape f32{16, {16 * 2 * 2 * 64 * 4}, {0}, {false}, false, 0};  // one group, f32
  RecordShape bf16{32, {32 * 2 * 2 * 64 * 2, 32 * 2 * 64 * 2}, {0, 128}, {false, false}};
  RecordShape quant{32, {4000, 1000}, {0, 64}, {false, false}, true, 96};  // odd sizes
  RecordShape sliding{32, {4096, 2048, 1024}, {0, 64, 512}, {false, true, false}};
  PageKey parent;
  for (const RecordShape& s : {f32, bf16, quant, sliding}) {
    const PageRecord r = make_record(rng, ns, parent, s);
    const std::vector<uint8_t> f = encode_page_file(r, ns);
    PageRecord back;
    const PageFileCheck c = decode(f, ns, r.key, back);
    ASSERT_TRUE(c.ok()) << page_file_error_name(c.error) << ": " << c.detail;
    test::expect_same(r, back);
    parent = r.key;
  }
}

TEST(PageFile, HeaderDescribesThePage) {
  std::mt19937 rng(2);
  const TierNamespace ns = test::test_ns("weights-123");
  RecordShape s;
  s.absent = {false, true};
  s.quantized = true;
  s.min_reusable = 48;
  const PageRecord r = make_record(rng, ns, PageKey{7, 9}, s);
  const std::vector<uint8_t> f = encode_page_file(r, ns);
  PageFileHeader h;
  ASSERT_TRUE(parse_page_header(f, static_cast<int64_t>(f.size()), ns.key(), h).ok());
  EXPECT_EQ(h.version, kPageFileVersion);
  EXPECT_EQ(h.fingerprint, "weights-123");
  EXPECT_EQ(h.scheme, "bf16");
  EXPECT_EQ(h.tag, "prefix");
  EXPECT_EQ(h.page_tokens, 16);
  EXPECT_EQ(h.tokens, r.tokens);
  EXPECT_EQ(h.parent, (PageKey{7, 9}));
  EXPECT_TRUE(h.quantized);
  EXPECT_EQ(h.min_reusable, 48);
  ASSERT_EQ(h.groups.size(), 2u);
  EXPECT_EQ(h.groups[0].bytes, 4096u);
  EXPECT_EQ(h.groups[0].offset, kPageFileAlign);  // payload starts at the second block
  EXPECT_EQ(h.groups[1].bytes, 0u);               // released sliding page
  EXPECT_EQ(h.groups[1].window, 64);
  EXPECT_EQ(h.file_bytes, f.size());
}

TEST(PageFile, EveryCheckFailsWithItsReason) {
  std::mt19937 rng(3);
  const TierNamespace ns = test::test_ns();
  const PageRecord r = make_record(rng, ns, PageKey{});
  const std::vector<uint8_t> good = encode_page_file(r, ns);
  PageRecord out;
  auto expect = [&](std::vector<uint8_t> f, PageFileError e, const char* what) {
    const PageFileCheck c = decode(f, ns, r.key, out);
    EXPECT_EQ(c.error, e) << what << ": got " << page_file_error_name(c.error) << " " << c.detail;
  };
  auto flipped = [&](size_t at) {
    std::vector<uint8_t> f = good;
    f[at] ^= 0x01;
    return f;
  };
  expect(flipped(0), PageFileError::kBadMagic, "magic");
  expect(flipped(8), PageFileError::kBadVersion, "version");
  expect(flipped(40), PageFileError::kHeaderChecksum, "page key bit");
  expect(flipped(130), PageFileError::kHeaderChecksum, "fingerprint string bit");
  expect(flipped(150), PageFileError::kHeaderChecksum, "token bit");
  expect(flipped(kPageFileAlign + 5), PageFileError::kPayloadChecksum, "payload bit");
  expect(flipped(good.size() - 1), PageFileError::kPayloadChecksum, "last payload byte");
  expect({good.begin(), good.end() - 1}, PageFileError::kTruncated, "one byte short");
  expect({good.begin(), good.begin() + 100}, PageFileError::kTruncated, "header cut");
  expect({good.begin(), good.begin() + 4}, PageFileError::kTruncated, "magic cut");
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expect(longer, PageFileError::kBadHeader, "one byte long");
  EXPECT_EQ(decode(good, test::test_ns("model-b"), r.key, out).error,
            PageFileError::kWrongNamespace);
  EXPECT_EQ(decode_page_file(good, ns.key(), PageKey{1, 2}, out).error, PageFileError::kWrongKey);
  EXPECT_TRUE(decode(good, ns, r.key, out).ok());
}

// A file whose header checksum is right but whose key does not hash its
// content (a forged or miscomputed key) is refused.
TEST(PageFile, KeyMustHashItsContent) {
  std::mt19937 rng(4);
  const TierNamespace ns = test::test_ns();
  PageRecord r = make_record(rng, ns, PageKey{});
  r.key.lo ^= 1;
  const std::vector<uint8_t> f = encode_page_file(r, ns);
  PageRecord out;
  EXPECT_EQ(decode_page_file(f, ns.key(), r.key, out).error, PageFileError::kWrongKey);
}

// Any single flipped byte or any truncation is refused, or (in padding no
// check covers) the record decodes unchanged: a wrong page is never served.
TEST(PageFile, NoFlipOrCutServesAWrongPage) {
  std::mt19937 rng(5);
  const TierNamespace ns = test::test_ns();
  RecordShape s;
  s.group_bytes = {300, 200};
  const PageRecord r = make_record(rng, ns, PageKey{3, 4}, s);
  const std::vector<uint8_t> good = encode_page_file(r, ns);
  int refused = 0;
  for (size_t at = 0; at < good.size(); ++at) {
    std::vector<uint8_t> f = good;
    f[at] ^= static_cast<uint8_t>(1u << (at % 8));
    PageRecord out;
    if (!decode(f, ns, r.key, out).ok()) {
      ++refused;
      continue;
    }
    test::expect_same(r, out);
  }
  EXPECT_GT(refused, 200 + 300 + 100);  // payload and header bytes at least
  for (size_t n = 0; n < good.size(); n += 7) {
    PageRecord out;
    EXPECT_FALSE(decode({good.begin(), good.begin() + static_cast<long>(n)}, ns, r.key, out).ok());
  }
}

}  // namespace
}  // namespace cairn
