#include "engine/restore_sink.h"

#include <algorithm>

#include "backend/device.h"
#include "backend/on_device.h"
#include "core/error.h"

namespace cairn {

PoolSink::PoolSink(std::shared_ptr<SlotMemory> staging,
                   std::vector<std::vector<std::vector<Tensor>>> pages)
    : staging_(std::move(staging)), pages_(std::move(pages)) {}

std::shared_ptr<uint8_t> PoolSink::staging(size_t n) {
  return staging_->buffer(n);
}

// Each shard's share of the logical bytes [offset, offset + n), copied and
// waited for.
void PoolSink::write(size_t page, size_t g, uint64_t offset, std::span<const uint8_t> bytes) {
  const std::vector<Tensor>& shards = pages_.at(page).at(g);
  const uint64_t shard_bytes = shards.front().nbytes();
  CAIRN_CHECK(offset + bytes.size() <= shard_bytes * shards.size(),
              "restore part [{}, +{}) of page {} group {}: past its {} bytes", offset, bytes.size(),
              page, g, shard_bytes * shards.size());
  DeviceBackend& dev = device_backend(shards.front().device().kind);
  for (uint64_t at = offset; at < offset + bytes.size();) {
    const Tensor& p = shards[at / shard_bytes];
    const uint64_t in = at % shard_bytes;
    const auto n = static_cast<int64_t>(std::min(shard_bytes - in, offset + bytes.size() - at));
    Tensor dst = Tensor::view_of(p.storage(), p.offset_bytes() + in, {n}, DType::kU8);
    uint8_t* from = const_cast<uint8_t*>(bytes.data()) + (at - offset);
    const Tensor src =
        Tensor::view_of(borrow_host(from, static_cast<size_t>(n)), 0, {n}, DType::kU8);
    const OnDevice on(p.device());  // a tensor-parallel shard's pages on their rank's GPU
    dev.copy(src, dst, kCopyStream);
    dev.synchronize(kCopyStream);  // the staging slot goes back, and the range counts as in
    at += static_cast<uint64_t>(n);
  }
}

}  // namespace cairn
