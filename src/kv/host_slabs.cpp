#include "kv/host_slabs.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/error.h"

// Under AddressSanitizer, free slots and a 64-byte gap after each page are poisoned, so an
// overrun into the next page or a use after release is still reported.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CAIRN_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define CAIRN_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define CAIRN_POISON(p, n) ((void)(p), (void)(n))
#define CAIRN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace cairn {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kGap = 64;
#else
constexpr int64_t kGap = 0;
#endif

constexpr int64_t kHuge = int64_t{2} << 20;         // a transparent huge page
constexpr int64_t kSlabTarget = int64_t{32} << 20;  // slab size when pages are small

int64_t round_up(int64_t v, int64_t to) {
  return (v + to - 1) / to * to;
}

}  // namespace

// Slabs [n_slabs][pages_per_slab × stride bytes] and the free slots; shared by
// every page handed out, so it lives until the last one is destroyed.
struct HostSlabs::State {
  int64_t page_bytes = 0, stride = 0, per_slab = 0, slab_bytes = 0;
  std::mutex mu;
  std::vector<void*> slabs;
  std::vector<uint8_t*> free;  // slots ready for reuse

  ~State() {
    for (void* s : slabs) {
      CAIRN_UNPOISON(s, static_cast<size_t>(slab_bytes));
      ::munmap(s, static_cast<size_t>(slab_bytes));
    }
  }
  // A new slab, 2 MiB aligned (mapped with a huge page of slack, the ends unmapped).
  void add_slab() {
    const auto want = static_cast<size_t>(slab_bytes), mapped = want + kHuge;
    void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      fail(ErrorCode::kOutOfMemory, "KV pages: mapping a slab of {} bytes failed", want);
    auto* base = static_cast<uint8_t*>(p);
    auto* aligned = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<intptr_t>(base), kHuge));
    if (aligned > base) ::munmap(base, static_cast<size_t>(aligned - base));
    const size_t tail = static_cast<size_t>(base + mapped - (aligned + want));
    if (tail > 0) ::munmap(aligned + want, tail);
    ::madvise(aligned, want, MADV_HUGEPAGE);  // advice only: without THP, 4 KiB pages
    CAIRN_POISON(aligned, want);
    slabs.push_back(aligned);
    for (int64_t i = per_slab - 1; i >= 0; --i) free.push_back(aligned + i * stride);
  }
};

namespace {

class SlotStorage final : public Storage {
 public:
  SlotStorage(std::shared_ptr<HostSlabs::State> state, uint8_t* slot, size_t bytes)
      : Storage(slot, bytes, Device::cpu()), state_(std::move(state)) {}
  ~SlotStorage() override {
    CAIRN_POISON(data(), size_bytes());
    std::lock_guard lock(state_->mu);
    state_->free.push_back(static_cast<uint8_t*>(data()));
  }

 private:
  std::shared_ptr<HostSlabs::State> state_;
};

}  // namespace

HostSlabs::HostSlabs(int64_t page_bytes) : state_(std::make_shared<State>()) {
  CAIRN_CHECK(page_bytes > 0, "page_bytes {}", page_bytes);
  State& s = *state_;
  s.page_bytes = page_bytes;
  s.stride = round_up(page_bytes, 64) + kGap;
  s.slab_bytes = round_up(std::max(kSlabTarget, 4 * s.stride), kHuge);
  s.per_slab = s.slab_bytes / s.stride;
}

HostSlabs::~HostSlabs() = default;

std::shared_ptr<Storage> HostSlabs::allocate() {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  if (s.free.empty()) s.add_slab();
  uint8_t* slot = s.free.back();
  s.free.pop_back();
  CAIRN_UNPOISON(slot, static_cast<size_t>(s.page_bytes));
  return std::make_shared<SlotStorage>(state_, slot, static_cast<size_t>(s.page_bytes));
}

int64_t HostSlabs::pages_per_slab() const {
  return state_->per_slab;
}

int64_t HostSlabs::n_slabs() const {
  std::lock_guard lock(state_->mu);
  return static_cast<int64_t>(state_->slabs.size());
}

}  // namespace cairn
