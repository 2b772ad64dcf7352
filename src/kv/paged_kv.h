// The paged KV state: the KvView the engine runs families through. Each
// sequence (a slot of ForwardBatch) holds a page table per layer group; pages
// come from one PagePool under a byte budget. A sequence's pages are in the
// model's full-precision format until it holds quant_start positions
// (bf16-first), then convert once to its quantization scheme. See docs/kv.md.
//
// Sharded with a tensor-parallel model's KV heads (docs/tensor-parallel.md):
// one state per rank, each in its own pool, kept in lockstep. This object is
// shard 0 and owns the others; every operation outside the forward (free,
// fork, trim, adopt, conversion, page references and allocations) is applied
// to every shard in rank order, and the forward gives each shard the same
// batch, so a page id names the same logical page in every shard's pool and
// the page tables, token counts and byte figures of shard 0 stand for all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "kv/kv_format.h"
#include "kv/layer_gate.h"
#include "kv/page_layout.h"
#include "kv/page_pool.h"
#include "model/config.h"
#include "model/kv_view.h"

namespace cairn {

constexpr int64_t kDefaultPageTokens = 32;

struct PagedKvOptions {
  int64_t page_tokens = kDefaultPageTokens;
  int64_t budget_bytes = int64_t{1} << 30;
  int64_t rollback_tokens = 0;        // R: sliding groups keep R positions past the window
  std::optional<KvStore> full_store;  // full-precision store; default full_store_for(config)
  KvQuantScheme quant;                // disabled: the sequence stays full precision
  // Where pages live: host memory, or a GPU's memory (q, k, v and out of the
  // forward then on that GPU too; pages written and attended by its kernels).
  Device device = Device::cpu();
  // A sharded state's: where shard r's pages live ([n_shards], shard 0's = device), each
  // tensor-parallel rank's on its own GPU; empty: every shard on `device`.
  std::vector<Device> shard_devices;
};

// One page's bytes as held in the pool (valid until the state next mutates).
struct ExportedPage {
  int64_t first_token = 0;
  std::span<const uint8_t> bytes;  // [page_bytes]
};

struct ExportedGroup {
  int32_t window = 0;
  std::vector<LayerFormat> formats;  // [group layers]
  int64_t page_bytes = 0;
  std::vector<ExportedPage> pages;  // live pages in order (released ones absent)
};

// A sequence's pages with the description needed to read them back.
struct SequenceExport {
  int64_t page_tokens = 0;
  int64_t n_tokens = 0;
  bool quantized = false;
  int64_t min_reusable_tokens = 0;
  std::vector<ExportedGroup> groups;  // in the state's group order
};

class PagedKvState final : public KvView {
 public:
  // Error(kInvalidArgument) for page_tokens ≤ 0, rollback_tokens < 0 or a
  // scheme whose size is not n_layers.
  PagedKvState(const ModelConfig& config, const PagedKvOptions& options);
  // One shard per config (Model::kv_shard_configs(), rank order), each with a
  // pool of options.budget_bytes. Error(kInvalidArgument) for no shard, or for
  // shards whose layers, KV heads or head_dim differ (their pages must match).
  PagedKvState(const std::vector<ModelConfig>& shards, const PagedKvOptions& options);
  ~PagedKvState() override;

  // Writes the span's rows into the slot's pages (allocating; copying a shared
  // page first), then attends. After the model's last layer, a sliding group
  // releases pages past its window + R, and a sequence that now holds
  // ≥ quant_start positions (> 0) converts. Error(kOutOfMemory) when pages do
  // not fit; Error(kInvalidArgument) for positions that do not continue the slot.
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override;

  // Plan: whether the pages n more positions of slot need fit the budget.
  bool can_append(int32_t slot, int64_t n) const;
  // Plan: the pool bytes appending n positions to slot takes at its peak: new
  // pages over all groups, a copy of a shared partial last page and, when the
  // append makes an unquantized sequence reach quant_start, the quantized pages
  // of the whole sequence. Sums over sequences compare with pool().free_bytes().
  int64_t bytes_to_append(int32_t slot, int64_t n) const;
  int64_t n_tokens(int32_t slot) const;
  bool is_quantized(int32_t slot) const;
  // Shortest prefix a reuse may trim this sequence to (its length at conversion).
  int64_t min_reusable_tokens(int32_t slot) const;

  // Releases every page of slot; the slot becomes empty.
  void free_sequence(int32_t slot);
  // Keeps the first n_keep positions (n_keep ≤ n_tokens). A quantized sequence
  // stays quantized. Error(kInvalidArgument) when a sliding group already
  // released positions the shorter sequence would still need.
  void trim(int32_t slot, int64_t n_keep);
  // Makes empty slot dst hold src's first n positions, sharing their pages by
  // reference (a shared page is copied before either sequence writes to it).
  void fork(int32_t src, int32_t dst, int64_t n);
  // Makes empty slot hold n_tokens positions in the given pages
  // [n_groups][ceil(n_tokens / page_tokens)] (-1: released; only leading pages of
  // a sliding group, never the ones its window still sees), retaining them. The
  // slot continues exactly as one that computed those positions (an unquantized
  // one reaching quant_start converts). Error(kInvalidArgument) for a shape or
  // hole that does not fit; the pages must be live pages of this state's arenas.
  void adopt(int32_t slot, const std::vector<std::vector<int32_t>>& pages, int64_t n_tokens,
             bool quantized, int64_t min_reusable);
  // Whether trim(slot, n_keep) would succeed (a sliding group still holds what it needs).
  bool can_trim(int32_t slot, int64_t n_keep) const;
  // The forward waits on gate before it reads each layer of slot's pages (pages
  // attached while a restore still fills them: layer_gate.h). Gates go with
  // take_gates, free_sequence, or when the slot is emptied.
  void add_gate(int32_t slot, std::shared_ptr<LayerGate> gate);
  std::vector<std::shared_ptr<LayerGate>> take_gates(int32_t slot);
  bool has_gates(int32_t slot) const { return !gates(slot).empty(); }
  const std::vector<std::shared_ptr<LayerGate>>& gates(int32_t slot) const;
  // Converts slot to its quantized formats now (what crossing quant_start does).
  void quantize_now(int32_t slot);

  // Shard 0's pages. Error(kUnsupported) for pages off the host.
  SequenceExport export_sequence(int32_t slot) const;
  // Fills empty slot from an export. Error(kInvalidArgument) when its page size,
  // groups or formats differ from this state's, or its pages do not fit;
  // Error(kUnsupported) for a sharded state.
  void import_sequence(int32_t slot, const SequenceExport& e);

  // Shards (rank order); shard(0) is this object. A tensor-parallel forward
  // reads them through a tp::ShardedKvView, rank r appending only to shard(r).
  int n_shards() const { return 1 + static_cast<int>(others_.size()); }
  KvView& shard(int rank);
  // A logical page: its bytes in every shard, shard 0 first
  // [n_shards][pool().page_bytes(arena)] (what the prefix tiers store).
  int64_t logical_page_bytes(int32_t arena) const { return pool_.page_bytes(arena) * n_shards(); }
  void read_page(int32_t arena, int32_t page, std::span<uint8_t> out) const;
  // Whether a logical page's bytes are shard 0's pool memory on the host, so a
  // reader may borrow them in place (else read_page copies them out).
  bool pages_in_place() const { return others_.empty() && pool_.on_host(); }
  // wait false: bytes must stay until wait_copies() (PagePool::write).
  void write_page(int32_t arena, int32_t page, std::span<const uint8_t> bytes, bool wait = true);
  void wait_copies() const;  // every shard's

  // K+V bytes one position of a sequence costs now, over all layers (one
  // shard's, as every other size here).
  int64_t bytes_per_token(bool quantized) const;
  const PagePool& pool() const { return pool_; }
  const PagePool& shard_pool(int rank) const;  // shard `rank`'s (pool() is shard 0's)
  const KvQuantScheme& quant_scheme() const { return quant_; }
  int64_t page_tokens() const { return page_tokens_; }
  const std::vector<LayerGroup>& groups() const { return layer_groups_; }
  // Page ids of slot's group g (-1: released), for tests.
  std::vector<int32_t> page_ids(int32_t slot, int g) const;
  int32_t arena_of(int32_t slot, int g) const;
  // References held outside sequences (the prefix cache's): a page lives while
  // any sequence or holder references it.
  void retain_page(int32_t arena, int32_t page);
  void release_page(int32_t arena, int32_t page);
  // Pages filled from outside (restored from a slower tier): the arena of group
  // g's pages in the full or quantized format; a new page (ref 1) there, or -1
  // when it does not fit the budget; its bytes [page_bytes(arena)], zeroed unless
  // `zeroed` is false (PagePool::allocate: the caller writes every byte first).
  int32_t group_arena(int g, bool quantized) const;
  const PageLayout& page_layout(int g, bool quantized) const;
  int32_t allocate_page(int32_t arena, bool zeroed = true);
  // Shard 0's page bytes; host pools only (a device address otherwise: use read_page).
  uint8_t* page_data(int32_t arena, int32_t page) { return pool_.data(arena, page); }
  // After a forward that failed part way (a rank may have allocated what
  // another did not) and the freeing of its sequences: makes every shard's
  // page ids and free lists those of shard 0 again. Error(kInternal) when the
  // shards' live pages differ (a page a sequence still holds).
  void resync_shards();

 private:
  struct GroupInfo {
    LayerGroup group;
    PageLayout full, quant;
    int32_t full_arena = -1, quant_arena = -1;
  };
  struct GroupState {
    std::vector<int32_t> pages;  // -1: released out of the window
    int64_t released_below = 0;  // positions below this are gone
  };
  struct Sequence {
    bool used = false;
    int64_t n_tokens = 0;
    std::vector<int64_t> n_layer;  // [n_layers] rows written in the current step
    std::vector<GroupState> groups;
    bool quantized = false;
    int64_t min_reusable = 0;
    std::vector<std::shared_ptr<LayerGate>> gates;  // waited on before each layer
  };

  Sequence& seq_for(int32_t slot);
  const Sequence& seq_at(int32_t slot) const;
  const PageLayout& layout(const Sequence& s, int g) const;
  int32_t arena(const Sequence& s, int g) const;
  void ensure_pages(Sequence& s, int g, int64_t begin, int64_t end);
  void check_positions(const Sequence& s, int il, const SeqSpan& span, const ForwardBatch& b) const;
  void write_rows(Sequence& s, int il, const SeqSpan& span, const ForwardBatch& b, const Tensor& k,
                  const Tensor& v);
  void after_layer(Sequence& s, int il);
  // The forward on pages off the host (paged_kv_device.cpp): every span's rows
  // written, then attended, in one or two calls per format (full, quantized).
  void append_and_attend_device(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                                const Tensor& v, const ops::AttentionParams& p, Tensor& out);
  struct DeviceCall;
  void add_device_span(const Sequence& s, int il, const SeqSpan& span, int64_t len, const Tensor& k,
                       const Tensor& v, DeviceCall& c) const;
  void run_device_call(int il, bool quantized, DeviceCall& c, const ForwardBatch& batch,
                       const Tensor& q, const ops::AttentionParams& p, Tensor& out) const;
  void convert_page_device(const GroupInfo& gi, int32_t from, int32_t to);
  void attend(const Sequence& s, int il, const SeqSpan& span, const ForwardBatch& b,
              const Tensor& q, const ops::AttentionParams& p, Tensor& out) const;
  void release_window(Sequence& s, int g);
  void convert(Sequence& s);
  void convert_page(const GroupInfo& gi, int32_t from, int32_t to);
  void release_from(Sequence& s, int g, size_t first_page);
  void check_adopt(const std::vector<std::vector<int32_t>>& pages, int64_t n_tokens,
                   bool quantized) const;
  int64_t bytes_to_append_of(const Sequence& s, int64_t n) const;
  int64_t pages_after_append(const Sequence& s, int g, int64_t n) const;

  ModelConfig config_;
  int64_t page_tokens_, rollback_tokens_;
  KvQuantScheme quant_;
  PagePool pool_;
  std::vector<LayerGroup> layer_groups_;
  std::vector<GroupInfo> groups_;
  std::vector<int> group_of_, index_in_group_;  // [n_layers]
  std::vector<Sequence> seqs_;
  std::vector<std::unique_ptr<PagedKvState>> others_;  // shards 1..N-1, rank order
};

}  // namespace cairn
