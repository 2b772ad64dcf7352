// A layer-wise restore's way into pool pages its readers cannot write in place
// (a GPU's: docs/durability.md, "Restores overlapped with the prompt"). Each
// part is read into a staging slot (page-locked on a GPU) and copied into its
// page on the backend's copy stream (kCopyStream), the copy waited for before
// the part counts as in: a forward that waited for the layer then reads bytes
// already in device memory.
#pragma once

#include <memory>
#include <vector>

#include "core/tensor.h"
#include "prefix/layered_restore.h"
#include "prefix/slot_memory.h"

namespace cairn {

class PoolSink final : public PartSink {
 public:
  // pages: [pages][groups][shards] each shard's page as a u8 view (taken on
  // the engine thread; they keep the memory alive). A part's offsets are in
  // the logical page, every shard's page in turn (PagedKvState::read_page).
  PoolSink(std::shared_ptr<SlotMemory> staging,
           std::vector<std::vector<std::vector<Tensor>>> pages);

  std::shared_ptr<uint8_t> staging(size_t n) override;
  void write(size_t page, size_t g, uint64_t offset, std::span<const uint8_t> bytes) override;

 private:
  std::shared_ptr<SlotMemory> staging_;
  std::vector<std::vector<std::vector<Tensor>>> pages_;
};

}  // namespace cairn
