#include "model/tp/sharded_kv.h"

#include "core/error.h"

namespace cairn::tp {

ShardedKvView::ShardedKvView(std::vector<std::unique_ptr<KvView>> shards)
    : owned_(std::move(shards)) {
  for (const auto& s : owned_) shards_.push_back(s.get());
  check();
}

ShardedKvView::ShardedKvView(std::vector<KvView*> shards) : shards_(std::move(shards)) {
  check();
}

ShardedKvView::ShardedKvView(std::unique_ptr<KvView> owner, std::vector<KvView*> shards)
    : owner_(std::move(owner)), shards_(std::move(shards)) {
  check();
}

void ShardedKvView::check() const {
  if (shards_.empty()) fail(ErrorCode::kInvalidArgument, "a sharded KV view needs ≥ 1 shard");
  for (const KvView* s : shards_)
    if (s == nullptr) fail(ErrorCode::kInvalidArgument, "a sharded KV view got a null shard");
}

void ShardedKvView::append_and_attend(int, const ForwardBatch&, const Tensor&, const Tensor&,
                                      const Tensor&, const ops::AttentionParams&, Tensor&) {
  fail(ErrorCode::kInvalidArgument,
       "a sharded KV view holds one shard per tensor-parallel rank; a single-device model "
       "cannot run on it");
}

}  // namespace cairn::tp
