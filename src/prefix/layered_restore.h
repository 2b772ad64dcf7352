// A chain of pages restored from the SSD tier layer range by layer range,
// straight into pool pages in host memory (or through staging buffers into a
// GPU's: PartSink), so that a sequence may compute the
// rest of its prompt while the reads go on (docs/durability.md, "Restores
// overlapped with the prompt"). Reads go range-major: the first layers of
// every page, then the next ones; a forward attending the pages waits per
// layer (the LayerGate side) only until that layer's range has been read and
// checked on every page.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "kv/layer_gate.h"
#include "prefix/ssd_restorer.h"
#include "prefix/ssd_tier.h"

namespace cairn {

// Where the parts go when the pages are not host memory the readers may write
// in place (a GPU's pool): each part is read into a staging buffer and copied
// into its page from there.
class PartSink {
 public:
  virtual ~PartSink() = default;
  // Host memory of ≥ n bytes starting at a multiple of 4096 (page-locked on a
  // GPU), the caller's until it lets go of it.
  virtual std::shared_ptr<uint8_t> staging(size_t n) = 0;
  // Group g of page i's bytes [offset, offset + bytes.size()) := bytes, in
  // place when it returns. Called on readers' threads, at once for distinct pages.
  virtual void write(size_t page, size_t g, uint64_t offset, std::span<const uint8_t> bytes) = 0;
};

struct LayeredPlan {
  std::vector<PageKey> keys;  // [pages] the chain, first page first
  // [pages] the tier page i is read from (a checkpoint's pages come from two);
  // empty: every page from the restore's tier.
  std::vector<SsdTier*> tiers;
  // [pages][groups] page memory the readers write in place, page_bytes[g]
  // each; or, with a sink, empty: the parts go through it.
  std::vector<std::vector<uint8_t*>> dst;
  std::shared_ptr<PartSink> sink;
  std::vector<int32_t> windows;      // [groups] the state's group windows
  std::vector<uint64_t> page_bytes;  // [groups] a logical page's (every shard's)
  // A tensor-parallel state's logical page holds every shard's page of a group
  // in turn: [n_shards][page_bytes[g] / n_shards].
  int n_shards = 1;
  // [ranges][groups] bytes [begin, end) of one shard's page of group g that
  // range r holds: the K and V blocks of the range's layers of that group.
  // Range r's part reads, in each shard's page, the segments starting in
  // [begin, end) (rounded up to segments; from the segment holding the
  // shard's first byte for the group's first range), so the parts of
  // consecutive ranges cover the page; a layer's first bytes may then come
  // with the part before, and a wait is for every range up to it.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> parts;
  std::vector<int> range_of_layer;  // [n_layers]
  int64_t first_position = 0;       // the sequence position where the first page starts
  int64_t page_tokens = 0;
  bool quantized = false;  // the pages' format (the tier's namespace)
  // Tests: each page's last range is read this much later, so that the request is queued, and
  // runs its first layers, while that range is still to come (what a slow disk does).
  std::chrono::milliseconds last_range_hold{0};
};

// Ranges of about equal layer counts over a model's layers, `n` of them at most.
std::vector<int> layer_ranges(int n_layers, int n);

// The runs [first, last) of group g's segments (segment_bytes each) that range
// r's part reads: in each shard's page, those starting in the range's bytes,
// or, for the group's first range, from the segment holding the shard page's
// first byte (it may have started in the previous shard's last range). In
// order, none overlapping; every byte of a layer is in a run of its range or
// an earlier one.
std::vector<std::pair<uint64_t, uint64_t>> part_segments(const LayeredPlan& plan, size_t g,
                                                         size_t range, uint64_t segment_bytes);

class LayeredRestore final : public LayerGate, public std::enable_shared_from_this<LayeredRestore> {
 public:
  // on_settle: called on a reader's thread when every page's header and first
  // range settled, and when everything has (the engine thread wakes).
  LayeredRestore(SsdTier& tier, LayeredPlan plan, std::function<void()> on_settle);
  ~LayeredRestore() override;
  // Queues every part on restorer, range-major (each holds the restore).
  void start(SsdRestorer& restorer);
  size_t n_pages() const { return plan_.keys.size(); }
  const PageKey& key(size_t i) const { return plan_.keys.at(i); }

  void wait_layer(int layer) override;
  void wait_all() override;
  int64_t failed_from() const override;

  // Every page's header and first range settled (read, failed or skipped).
  bool headers_done() const;
  bool done() const;                                      // every part settled
  std::chrono::steady_clock::time_point done_at() const;  // when the last part settled
  // Pages from the first whose every part so far passed (the chain ends at
  // the first failure or skip).
  size_t good_pages() const;
  // Pages from the first whose header and first range passed (later parts may
  // still fail): what may enter the RAM tier pending once headers_done().
  size_t header_pages() const;
  // Page i's header; i < header_pages() once headers_done().
  const PageFileHeader& header(size_t i) const;
  // The chain ends before page `first`: parts of it and of later pages not yet
  // started are skipped (those pages count as failed). end_chain(0) cancels.
  void end_chain(size_t first);
  // Once done(): lets go of the sink (its views of the pages), on the caller's
  // thread — a GPU page whose last reference it held is freed there, in the
  // ops' stream's order, never on a reader's thread.
  void release_sink();

 private:
  struct Page;
  void run(size_t page, size_t range, bool skip);
  PageFileCheck read_part(size_t page, size_t range);
  PageFileCheck read_group(size_t page, size_t g, uint64_t first, uint64_t last, AlignedBytes& buf);
  PageFileCheck open(size_t page);
  void settle(size_t page, size_t range, bool ok);

  SsdTier& tier(size_t page) const { return plan_.tiers.empty() ? tier_ : *plan_.tiers[page]; }

  SsdTier& tier_;
  LayeredPlan plan_;
  std::function<void()> on_settle_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::unique_ptr<Page>> pages_;
  std::vector<size_t> range_done_;  // [ranges] pages settled in that range
  size_t ready_ranges_ = 0;         // leading ranges settled on every page
  std::vector<bool> first_ok_;      // [pages] its header and first range passed
  size_t n_ranges_ = 0, n_settled_ = 0;
  int64_t failed_ = -1;  // the first page a part of which failed or was skipped
  std::chrono::steady_clock::time_point done_at_;
};

}  // namespace cairn
