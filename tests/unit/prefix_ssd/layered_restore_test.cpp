// Page files read in parts (format version 2's segment checksums) and chains
// restored layer range by layer range: bytes land where the plan says, a
// forward's per-layer waits return once that layer is in on every page (also
// when the parts go through a sink, as into a GPU's pages), and a part failing
// its check or its copy ends the chain at its page, never earlier.
#include "prefix/layered_restore.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "prefix/slot_memory.h"
#include "ssd_test_util.h"

namespace cairn {
namespace {

// Two groups of 8 "layers" each: a full group of 8 x 8 KiB (16 segments of
// 4 KiB) and a sliding one of 8 x 1 KiB (two segments).
test::RecordShape shape() {
  test::RecordShape s;
  s.group_bytes = {8 * 8192, 8 * 1024};
  return s;
}

// Page memory as a pool gives it: 4 KiB-aligned (parts read straight into
// it), or `shift` bytes past that (parts go through a buffer).
struct PageMemory {
  std::vector<std::unique_ptr<AlignedBytes>> blocks;
  std::vector<std::span<uint8_t>> pages;  // [pages * 2 + g]
};

// Ranges of 2 layers over 8: layer l of group g occupies [l * step, (l+1) * step).
LayeredPlan plan_for(const std::vector<PageKey>& keys, PageMemory& mem, int n_ranges,
                     size_t shift = 0) {
  const test::RecordShape s = shape();
  LayeredPlan p;
  p.keys = keys;
  p.windows = s.windows;
  p.range_of_layer = layer_ranges(8, n_ranges);
  p.parts.assign(static_cast<size_t>(n_ranges), std::vector<std::pair<uint64_t, uint64_t>>(2));
  for (size_t g = 0; g < 2; ++g) {
    const auto bytes = static_cast<uint64_t>(s.group_bytes[g]);
    p.page_bytes.push_back(bytes);
    for (int l = 0; l < 8; ++l) {
      auto& [b, e] = p.parts[static_cast<size_t>(p.range_of_layer[static_cast<size_t>(l)])][g];
      if (b == e) b = static_cast<uint64_t>(l) * bytes / 8;
      e = static_cast<uint64_t>(l + 1) * bytes / 8;
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    p.dst.emplace_back();
    for (size_t g = 0; g < 2; ++g) {
      const auto n = static_cast<size_t>(s.group_bytes[g]);
      auto& b = mem.blocks.emplace_back(std::make_unique<AlignedBytes>(n + shift));
      std::memset(b->data(), 0xEE, n + shift);  // poisoned
      mem.pages.emplace_back(b->data() + shift, n);
      p.dst.back().push_back(b->data() + shift);
    }
  }
  p.first_position = 5 * s.page_tokens;
  p.page_tokens = s.page_tokens;
  return p;
}

// A tier in a fresh folder holding a chain of pages, the page memory a
// restore of it fills, and the readers.
class LayeredRestoreTest : public ::testing::Test {
 protected:
  void write_chain(int n, uint32_t seed) {
    std::mt19937 rng(seed);
    PageKey parent;
    for (int i = 0; i < n; ++i) {
      records_.push_back(test::make_record(rng, tier_.ns(), parent, shape()));
      ASSERT_TRUE(tier_.write(records_.back()).ok());
      keys_.push_back(parent = records_.back().key);
    }
  }
  std::shared_ptr<LayeredRestore> make(LayeredPlan plan, std::function<void()> wake = {}) {
    return std::make_shared<LayeredRestore>(tier_, std::move(plan), std::move(wake));
  }
  void start(LayeredRestore& r, int threads) {
    restorer_ = std::make_unique<SsdRestorer>(threads);
    r.start(*restorer_);
  }
  bool page_whole(size_t i) const {
    return test::same_bytes(mem_.pages[i * 2], records_[i].groups[0].bytes) &&
           test::same_bytes(mem_.pages[i * 2 + 1], records_[i].groups[1].bytes);
  }

  test::TempDir tmp_;
  SsdTier tier_{tmp_.path(), int64_t{1} << 30, test::test_ns()};
  std::vector<PageRecord> records_;
  std::vector<PageKey> keys_;
  PageMemory mem_;
  std::unique_ptr<SsdRestorer> restorer_;  // first to go: its readers use the rest
};

TEST(PageFileSegments, APartChecksOnlyTheSegmentsItTouches) {
  std::mt19937 rng(71);
  const TierNamespace ns = test::test_ns();
  const PageRecord r = test::make_record(rng, ns, PageKey{}, shape());
  std::vector<uint8_t> f = encode_page_file(r, ns);
  PageFileHeader h;
  ASSERT_TRUE(parse_page_header(f, static_cast<int64_t>(f.size()), ns.key(), h).ok());
  ASSERT_EQ(h.version, 2u);
  const PageFileHeader::Group& g0 = h.groups[0];
  EXPECT_EQ(g0.offset % kPageFileAlign, 0u);
  EXPECT_EQ(g0.segment_bytes, page_segment_bytes(g0.bytes));
  ASSERT_EQ(g0.checksums.size(), (g0.bytes + g0.segment_bytes - 1) / g0.segment_bytes);
  ASSERT_GE(g0.checksums.size(), 2u);
  f[g0.offset + g0.bytes - 1] ^= 0x01;  // the last segment's last byte
  const uint64_t n = g0.checksums.size();
  const std::span<const uint8_t> bytes(f.data() + g0.offset, g0.bytes);
  EXPECT_TRUE(check_segments(h, 0, 0, n - 1, bytes).ok());
  EXPECT_EQ(check_segments(h, 0, n - 1, n, bytes.subspan((n - 1) * g0.segment_bytes)).error,
            PageFileError::kPayloadChecksum);
  PageRecord out;
  EXPECT_EQ(decode_page_file(f, ns.key(), r.key, out).error, PageFileError::kPayloadChecksum);
  EXPECT_EQ(g0.segments_of(0, 1), (std::pair<uint64_t, uint64_t>{0, 1}));
  EXPECT_EQ(g0.segments_of(g0.segment_bytes - 1, g0.segment_bytes + 1),
            (std::pair<uint64_t, uint64_t>{0, 2}));
}

TEST(PageFileSegments, AFormatVersionOneFileIsAMiss) {
  std::mt19937 rng(72);
  const TierNamespace ns = test::test_ns();
  const PageRecord r = test::make_record(rng, ns, PageKey{}, shape());
  std::vector<uint8_t> f = encode_page_file(r, ns);
  f[8] = 1;
  PageRecord out;
  EXPECT_EQ(decode_page_file(f, ns.key(), r.key, out).error, PageFileError::kBadVersion);
}

TEST_F(LayeredRestoreTest, PagesArriveWhereThePlanSaysRangeByRange) {
  write_chain(6, 73);
  std::atomic<int> wakes{0};
  auto restore = make(plan_for(keys_, mem_, 4), [&] { ++wakes; });
  start(*restore, 3);
  for (int l = 0; l < 8; ++l) restore->wait_layer(l);
  EXPECT_TRUE(restore->done());
  EXPECT_TRUE(restore->headers_done());
  EXPECT_EQ(restore->good_pages(), 6u);
  EXPECT_EQ(restore->failed_from(), -1);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(page_whole(i)) << i;
    EXPECT_EQ(restore->header(i).tokens, records_[i].tokens);
    EXPECT_EQ(restore->header(i).parent, records_[i].parent);
  }
  EXPECT_EQ(tier_.stats().hits, 6);
  // First ranges in, then everything (the last call may follow the wait's return).
  for (int i = 0; i < 1000 && wakes.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(wakes.load(), 2);
}

TEST_F(LayeredRestoreTest, PageMemoryOffTheBlockBoundaryIsFilledThroughABuffer) {
  write_chain(3, 78);
  auto restore = make(plan_for(keys_, mem_, 4, 64));
  start(*restore, 2);
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(page_whole(i)) << i;
}

// A flipped byte in page 3's last layer: pages 0-2 whole, the chain ends at 3,
// its later pages are never read, and the failure names page 3's position.
TEST_F(LayeredRestoreTest, ALateFailureEndsTheChainAtItsPage) {
  write_chain(6, 74);
  PageFileHeader h;
  const std::vector<uint8_t> f = test::read_all(tier_.path_of(keys_[3]));
  ASSERT_TRUE(parse_page_header(f, static_cast<int64_t>(f.size()), tier_.ns().key(), h).ok());
  test::flip_byte(tier_.path_of(keys_[3]), h.groups[0].offset + h.groups[0].bytes - 5);
  auto restore = make(plan_for(keys_, mem_, 4));
  start(*restore, 2);
  restore->wait_layer(0);
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 3u);
  EXPECT_EQ(restore->failed_from(), (5 + 3) * shape().page_tokens);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(page_whole(i)) << i;
  EXPECT_EQ(tier_.stats().corrupt, 1);
  EXPECT_FALSE(tier_.contains(keys_[3]));  // set aside, never served again
  EXPECT_TRUE(tier_.contains(keys_[4]));   // unread, left as it was
}

TEST_F(LayeredRestoreTest, AForwardWaitsForItsLayerOnEveryPage) {
  write_chain(4, 75);
  auto restore = make(plan_for(keys_, mem_, 4));
  start(*restore, 4);
  restore->wait_layer(6);  // range 3: the last pair of layers
  const auto from = static_cast<size_t>(6 * 8192), to = static_cast<size_t>(8 * 8192);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(std::memcmp(mem_.pages[i * 2].data() + from,
                          records_[i].groups[0].bytes.data() + from, to - from),
              0)
        << i;
  restore->wait_all();
}

TEST_F(LayeredRestoreTest, EndingTheChainFirstSkipsEveryPart) {
  write_chain(5, 76);
  auto restore = make(plan_for(keys_, mem_, 2));
  restore->end_chain(0);
  start(*restore, 2);
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 0u);
  EXPECT_EQ(restore->failed_from(), 5 * shape().page_tokens);
  EXPECT_EQ(tier_.stats().hits + tier_.stats().misses, 0);
  EXPECT_EQ(mem_.pages[0][0], 0xEE);
}

TEST_F(LayeredRestoreTest, AHeaderThatDoesNotFitThePlanIsAFailure) {
  write_chain(2, 77);
  LayeredPlan p = plan_for(keys_, mem_, 2);
  p.quantized = true;  // the files hold full-precision pages
  auto restore = make(std::move(p));
  start(*restore, 2);
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 0u);
  EXPECT_EQ(tier_.stats().hits, 0);
  EXPECT_FALSE(tier_.contains(keys_[0]));  // never served again
}

// Parts through a sink, as into a GPU's pages: read into slots of its
// staging memory, then copied into the page memory (host memory here).
// Copies into page `fail_page` fail.
class CopySink final : public PartSink {
 public:
  explicit CopySink(PageMemory& mem, size_t fail_page = SIZE_MAX)
      : mem_(mem), fail_page_(fail_page) {}
  std::shared_ptr<uint8_t> staging(size_t n) override {
    std::shared_ptr<uint8_t> b = slots_.buffer(n);
    if (reinterpret_cast<uintptr_t>(b.get()) % kPageFileAlign != 0) ++misaligned;
    return b;
  }
  void write(size_t page, size_t g, uint64_t offset, std::span<const uint8_t> bytes) override {
    if (page == fail_page_) fail(ErrorCode::kInternal, "the copy failed");
    std::span<uint8_t> dst = mem_.pages.at(page * 2 + g);
    ASSERT_LE(offset + bytes.size(), dst.size());
    std::memcpy(dst.data() + offset, bytes.data(), bytes.size());
    ++writes;
  }
  std::atomic<int> writes{0}, misaligned{0};

 private:
  PageMemory& mem_;
  size_t fail_page_;
  SlotMemory slots_{[](size_t n) { return allocate_host(n); }, kPageFileAlign, size_t{1} << 20};
};

LayeredPlan sink_plan(const std::vector<PageKey>& keys, PageMemory& mem,
                      std::shared_ptr<PartSink> sink) {
  LayeredPlan p = plan_for(keys, mem, 4);
  p.dst.clear();  // the pages are reached through the sink only
  p.sink = std::move(sink);
  return p;
}

TEST_F(LayeredRestoreTest, PartsThroughASinkArriveWhereThePlanSays) {
  write_chain(4, 79);
  auto sink = std::make_shared<CopySink>(mem_);
  auto restore = make(sink_plan(keys_, mem_, sink));
  start(*restore, 3);
  restore->wait_layer(2);  // range 1: its bytes of the full group are in on every page
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(std::memcmp(mem_.pages[i * 2].data() + 2 * 8192,
                          records_[i].groups[0].bytes.data() + 2 * 8192, 2 * 8192),
              0)
        << i;
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(page_whole(i)) << i;
  // A page: four parts of the full group, two of the sliding one (its two
  // segments start in ranges 0 and 2; ranges 1 and 3 hold none).
  EXPECT_EQ(sink->writes.load(), 4 * 6);
  EXPECT_EQ(sink->misaligned.load(), 0);
  restore->release_sink();  // done: its views of the pages go on this thread
  EXPECT_EQ(sink.use_count(), 1);
}

// A copy into page 2 fails: the chain ends there as for a failed check, and
// the file, which is not at fault, stays in the tier.
TEST_F(LayeredRestoreTest, ACopyThatFailsEndsTheChainAtItsPage) {
  write_chain(4, 80);
  auto restore = make(sink_plan(keys_, mem_, std::make_shared<CopySink>(mem_, 2)));
  start(*restore, 2);
  restore->wait_all();
  EXPECT_EQ(restore->good_pages(), 2u);
  EXPECT_EQ(restore->failed_from(), (5 + 2) * shape().page_tokens);
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(page_whole(i)) << i;
  EXPECT_EQ(tier_.stats().corrupt, 0);
  EXPECT_TRUE(tier_.contains(keys_[2]));
}

// A group of 8 layers of layer_bytes each (K and V) per shard, n_shards pages
// in turn, in n_ranges ranges.
LayeredPlan shard_plan(int n_shards, uint64_t layer_bytes, int n_ranges) {
  LayeredPlan p;
  p.n_shards = n_shards;
  p.page_bytes = {layer_bytes * 8 * static_cast<uint64_t>(n_shards)};
  p.range_of_layer = layer_ranges(8, n_ranges);
  p.parts.assign(static_cast<size_t>(n_ranges), std::vector<std::pair<uint64_t, uint64_t>>(1));
  for (int l = 0; l < 8; ++l) {
    auto& [b, e] = p.parts[static_cast<size_t>(p.range_of_layer[static_cast<size_t>(l)])][0];
    if (b == e) b = static_cast<uint64_t>(l) * layer_bytes;
    e = static_cast<uint64_t>(l + 1) * layer_bytes;
  }
  return p;
}

// Every byte of layer l in every shard's page is in a segment that a range up
// to l's reads (so a wait for l finds it in), every segment is read, and a
// part's runs are ordered and apart. Shard pages of 2.5, 1.25 and 3 segments:
// a segment then holds one shard's last layers and the next one's first.
TEST(PartSegments, EveryLayerIsInByItsRangeInEveryShard) {
  constexpr uint64_t kSeg = 4096;
  for (const int n_shards : {1, 2, 3})
    for (const uint64_t layer_bytes : {uint64_t{1280}, uint64_t{640}, uint64_t{1536}})
      for (const int n_ranges : {1, 2, 3, 4}) {
        const LayeredPlan p = shard_plan(n_shards, layer_bytes, n_ranges);
        const uint64_t n_segments = (p.page_bytes[0] + kSeg - 1) / kSeg;
        std::vector<int> first_range(n_segments, -1);  // the earliest range reading it
        for (int r = 0; r < n_ranges; ++r) {
          uint64_t prev = 0;
          for (const auto& [first, last] : part_segments(p, 0, static_cast<size_t>(r), kSeg)) {
            ASSERT_TRUE(first < last && first >= prev && last <= n_segments);
            prev = last;
            for (uint64_t k = first; k < last; ++k)
              if (first_range[k] < 0) first_range[k] = r;
          }
        }
        const std::string at =
            fmt::format("{} shards, {} B layers, {} ranges", n_shards, layer_bytes, n_ranges);
        for (uint64_t k = 0; k < n_segments; ++k) EXPECT_GE(first_range[k], 0) << at << " " << k;
        for (int sh = 0; sh < n_shards; ++sh)
          for (int l = 0; l < 8; ++l) {
            const uint64_t lo = static_cast<uint64_t>(sh) * layer_bytes * 8 + l * layer_bytes;
            for (uint64_t k = lo / kSeg; k < (lo + layer_bytes + kSeg - 1) / kSeg; ++k)
              EXPECT_LE(first_range[k], p.range_of_layer[static_cast<size_t>(l)])
                  << at << ": shard " << sh << " layer " << l << " segment " << k;
          }
      }
}

TEST(LayerRanges, SplitLayersInOrderAndAboutEvenly) {
  EXPECT_EQ(layer_ranges(8, 4), (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(layer_ranges(3, 4), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(layer_ranges(5, 1), (std::vector<int>{0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace cairn
