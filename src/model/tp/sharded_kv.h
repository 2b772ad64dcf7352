// The KV state of a tensor-parallel model: one KvView per rank, each holding
// only the KV heads of that rank's query heads (made for the rank's config,
// Model::kv_shard_configs()). A rank's forward appends and attends through its
// own shard; the sharded view itself is never called directly.
#pragma once

#include <memory>
#include <vector>

#include "model/kv_view.h"

namespace cairn::tp {

class ShardedKvView final : public KvView {
 public:
  // Error(kInvalidArgument) for no shards or a null one.
  explicit ShardedKvView(std::vector<std::unique_ptr<KvView>> shards);
  // Borrows shards the caller keeps alive (the engine's PagedKvState shards).
  explicit ShardedKvView(std::vector<KvView*> shards);
  // Borrows shards that `owner` holds (a PagedKvState's), and keeps owner alive.
  ShardedKvView(std::unique_ptr<KvView> owner, std::vector<KvView*> shards);

  int n_shards() const { return static_cast<int>(shards_.size()); }
  KvView& shard(int rank) { return *shards_.at(static_cast<size_t>(rank)); }

  // Error(kInvalidArgument): a model reads a sharded view through its shards.
  void append_and_attend(int il, const ForwardBatch& batch, const Tensor& q, const Tensor& k,
                         const Tensor& v, const ops::AttentionParams& p, Tensor& out) override;

 private:
  void check() const;

  std::vector<std::unique_ptr<KvView>> owned_;  // empty when borrowed
  std::unique_ptr<KvView> owner_;               // what holds borrowed shards, if given
  std::vector<KvView*> shards_;                 // [n_ranks]
};

}  // namespace cairn::tp
