// A PagedKvState sharded with a tensor-parallel model's KV heads: the other
// shards, the bytes of a logical page across them, and putting them back in
// step after a failed forward.
#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "kv/paged_kv.h"

namespace cairn {
namespace {

const ModelConfig& first_shard(const std::vector<ModelConfig>& shards,
                               const PagedKvOptions& options) {
  if (shards.empty()) fail(ErrorCode::kInvalidArgument, "a KV state needs ≥ 1 shard");
  const std::vector<Device>& d = options.shard_devices;
  if (!d.empty() && (d.size() != shards.size() || d[0] != options.device))
    fail(ErrorCode::kInvalidArgument,
         "KV shard devices: {} given for {} shards (shard 0's must be the state's device)",
         d.size(), shards.size());
  return shards[0];
}

// Shard r's options: its own device.
PagedKvOptions shard_options(const PagedKvOptions& options, size_t r) {
  PagedKvOptions o = options;
  if (!options.shard_devices.empty()) o.device = options.shard_devices[r];
  o.shard_devices.clear();
  return o;
}

}  // namespace

PagedKvState::PagedKvState(const std::vector<ModelConfig>& shards, const PagedKvOptions& options)
    : PagedKvState(first_shard(shards, options), shard_options(options, 0)) {
  for (size_t r = 1; r < shards.size(); ++r) {
    const ModelConfig& c = shards[r];
    // Equal shapes give equal page sizes: one page id then names the same
    // position range in every shard's pool.
    if (c.n_layers != config_.n_layers || c.n_kv_heads != config_.n_kv_heads ||
        c.head_dim != config_.head_dim || c.layer_window != config_.layer_window)
      fail(ErrorCode::kInvalidArgument,
           "KV shard {} has {} layers, {} KV heads of {}; shard 0 has {}, {} of {}", r, c.n_layers,
           c.n_kv_heads, c.head_dim, config_.n_layers, config_.n_kv_heads, config_.head_dim);
    others_.push_back(std::make_unique<PagedKvState>(c, shard_options(options, r)));
  }
}

PagedKvState::~PagedKvState() = default;

KvView& PagedKvState::shard(int rank) {
  if (rank < 0 || rank >= n_shards())
    fail(ErrorCode::kInvalidArgument, "KV shard {} of {}", rank, n_shards());
  return rank == 0 ? static_cast<KvView&>(*this) : *others_[static_cast<size_t>(rank - 1)];
}

const PagePool& PagedKvState::shard_pool(int rank) const {
  if (rank < 0 || rank >= n_shards())
    fail(ErrorCode::kInvalidArgument, "KV shard {} of {}", rank, n_shards());
  return rank == 0 ? pool_ : others_[static_cast<size_t>(rank - 1)]->pool_;
}

void PagedKvState::wait_copies() const {
  pool_.wait_copies();
  for (const auto& o : others_) o->pool_.wait_copies();
}

void PagedKvState::read_page(int32_t arena, int32_t page, std::span<uint8_t> out) const {
  const auto n = static_cast<size_t>(pool_.page_bytes(arena));
  CAIRN_CHECK(out.size() == n * static_cast<size_t>(n_shards()), "read_page into {} bytes",
              out.size());
  pool_.read(arena, page, out.first(n));
  for (size_t r = 0; r < others_.size(); ++r)
    others_[r]->pool_.read(arena, page, out.subspan((r + 1) * n, n));
}

void PagedKvState::write_page(int32_t arena, int32_t page, std::span<const uint8_t> bytes,
                              bool wait) {
  const auto n = static_cast<size_t>(pool_.page_bytes(arena));
  CAIRN_CHECK(bytes.size() == n * static_cast<size_t>(n_shards()), "write_page of {} bytes",
              bytes.size());
  pool_.write(arena, page, bytes.first(n), wait);
  for (size_t r = 0; r < others_.size(); ++r)
    others_[r]->pool_.write(arena, page, bytes.subspan((r + 1) * n, n), wait);
}

// Called once a failed step's sequences are freed: what is still held (the
// prefix cache's pages, restores' spare pages) is alike in every shard; only
// the ids each shard handed out meanwhile, and its free-list order, differ.
void PagedKvState::resync_shards() {
  for (auto& o : others_) {
    for (const GroupInfo& gi : groups_)
      for (int32_t a : {gi.full_arena, gi.quant_arena}) {
        const PageMeta &lead = pool_.meta(a), &mine = o->pool_.meta(a);
        for (int32_t id = 0; id < std::max(lead.n_pages(), mine.n_pages()); ++id) {
          const int32_t l = id < lead.n_pages() ? lead.ref_count(id) : 0;
          const int32_t m = id < mine.n_pages() ? mine.ref_count(id) : 0;
          if (l != m)
            fail(ErrorCode::kInternal, "KV shards differ: page {} of {} has {} and {} references",
                 id, pool_.arena_name(a), l, m);
        }
      }
    o->pool_.follow(pool_);
    o->seqs_ = seqs_;  // page tables: every sequence left holds the same ids
  }
}

}  // namespace cairn
