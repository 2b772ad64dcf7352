#include "engine/restore_sink.h"

#include "backend/device.h"
#include "core/error.h"

namespace cairn {

PoolSink::PoolSink(std::shared_ptr<SlotMemory> staging, std::vector<std::vector<Tensor>> pages)
    : staging_(std::move(staging)), pages_(std::move(pages)) {}

std::shared_ptr<uint8_t> PoolSink::staging(size_t n) {
  return staging_->buffer(n);
}

void PoolSink::write(size_t page, size_t g, uint64_t offset, std::span<const uint8_t> bytes) {
  const Tensor& p = pages_.at(page).at(g);
  const auto n = static_cast<int64_t>(bytes.size());
  CAIRN_CHECK(p.defined() && offset + bytes.size() <= p.nbytes(),
              "restore part [{}, +{}) of page {} group {}: past its {} bytes", offset, n, page, g,
              p.defined() ? p.nbytes() : 0);
  Tensor dst = Tensor::view_of(p.storage(), p.offset_bytes() + offset, {n}, DType::kU8);
  const Tensor src = Tensor::view_of(borrow_host(const_cast<uint8_t*>(bytes.data()), bytes.size()),
                                     0, {n}, DType::kU8);
  DeviceBackend& dev = device_backend(p.device().kind);
  dev.copy(src, dst, kCopyStream);
  dev.synchronize(kCopyStream);  // the staging slot goes back, and the range counts as in
}

}  // namespace cairn
