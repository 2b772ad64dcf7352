#include "prefix/slot_memory.h"

#include <algorithm>

#include "core/error.h"

namespace cairn {

// A chunk of ≥ n bytes from the allocator whose returned first byte is
// aligned: again with align - 1 bytes more when the first try's was not.
uint8_t* SlotMemory::add_chunk(State& m, size_t n) {
  std::shared_ptr<Storage> s = m.allocate(n);
  auto at = reinterpret_cast<uintptr_t>(s->data());
  if (at % m.align != 0) {
    s = m.allocate(n + m.align - 1);
    at = reinterpret_cast<uintptr_t>(s->data());
  }
  m.allocated += static_cast<int64_t>(s->size_bytes());
  m.chunks.push_back(std::move(s));
  return reinterpret_cast<uint8_t*>((at + m.align - 1) / m.align * m.align);
}

SlotMemory::SlotMemory(Allocate allocate, size_t align, size_t chunk_bytes)
    : state_(std::make_shared<State>()) {
  CAIRN_CHECK(allocate && align > 0 && (align & (align - 1)) == 0,
              "slot memory needs an allocator and a power-of-two alignment, not {}", align);
  state_->allocate = std::move(allocate);
  state_->align = align;
  state_->chunk_bytes = std::max(chunk_bytes, align);
}

std::shared_ptr<uint8_t> SlotMemory::buffer(size_t n) {
  State& m = *state_;
  const size_t slot = (std::max<size_t>(n, 1) + m.align - 1) / m.align * m.align;
  uint8_t* p = nullptr;
  {
    std::lock_guard lock(m.mu);
    std::vector<uint8_t*>& free = m.free[slot];
    if (free.empty()) {
      const size_t chunk = std::max(slot, m.chunk_bytes / slot * slot);
      uint8_t* base = add_chunk(m, chunk);
      for (size_t end = chunk; end >= slot; end -= slot) free.push_back(base + end - slot);
    }
    p = free.back();  // the chunk's first slot first
    free.pop_back();
  }
  return {p, [st = state_, slot](uint8_t* q) {
            std::lock_guard lock(st->mu);
            st->free[slot].push_back(q);
          }};
}

int64_t SlotMemory::allocated_bytes() const {
  std::lock_guard lock(state_->mu);
  return state_->allocated;
}

}  // namespace cairn
