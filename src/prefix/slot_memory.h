// Host memory handed out in slots: chunks from an allocator (page-locked on a
// GPU) cut into slots of one size each, a released slot waiting in its size's
// free list for the next buffer of that size. Never returned to the allocator
// while a buffer or the SlotMemory lives: bounded by the peak in use plus one
// chunk per slot size. What the host tier keeps records in, and what a
// layer-wise restore into device pages reads its parts into. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/storage.h"

namespace cairn {

class SlotMemory {
 public:
  // n bytes of host memory (DeviceBackend::allocate_pinned_host on a GPU).
  using Allocate = std::function<std::shared_ptr<Storage>(size_t n)>;

  // Slots start at multiples of `align` (a power of two) and span a multiple
  // of it; chunks are about chunk_bytes (one slot at least).
  SlotMemory(Allocate allocate, size_t align, size_t chunk_bytes = size_t{32} << 20);

  // A slot of ≥ n bytes; goes back to the free list when the last reference
  // goes (on any thread, also after this object is gone).
  std::shared_ptr<uint8_t> buffer(size_t n);
  int64_t allocated_bytes() const;  // chunks' bytes so far

 private:
  struct State {
    Allocate allocate;
    size_t align = 0, chunk_bytes = 0;
    std::mutex mu;
    std::vector<std::shared_ptr<Storage>> chunks;
    std::unordered_map<size_t, std::vector<uint8_t*>> free;  // slot bytes → slots
    int64_t allocated = 0;
  };
  static uint8_t* add_chunk(State& m, size_t n);  // under m.mu
  std::shared_ptr<State> state_;
};

}  // namespace cairn
