#include "kv/page_pool.h"

#include <cstring>
#include <new>

#include "core/error.h"

namespace cairn {

PagePool::PagePool(int64_t budget_bytes) : budget_bytes_(budget_bytes) {
  if (budget_bytes <= 0)
    fail(ErrorCode::kInvalidArgument, "KV budget {} bytes must be > 0", budget_bytes);
}

int32_t PagePool::add_arena(int64_t page_bytes, std::string name) {
  CAIRN_CHECK(page_bytes > 0, "arena {} with page_bytes {}", name, page_bytes);
  arenas_.push_back(Arena{page_bytes, std::move(name), PageMeta(0), {}});
  return static_cast<int32_t>(arenas_.size() - 1);
}

PagePool::Arena& PagePool::arena_at(int32_t a) {
  CAIRN_CHECK(a >= 0 && a < static_cast<int32_t>(arenas_.size()), "arena {}", a);
  return arenas_[static_cast<size_t>(a)];
}

const PagePool::Arena& PagePool::arena_at(int32_t a) const {
  CAIRN_CHECK(a >= 0 && a < static_cast<int32_t>(arenas_.size()), "arena {}", a);
  return arenas_[static_cast<size_t>(a)];
}

int32_t PagePool::n_used_pages() const {
  int32_t n = 0;
  for (const Arena& a : arenas_) n += a.meta.n_used();
  return n;
}

bool PagePool::can_allocate(int32_t arena, int64_t n) const {
  return n >= 0 && used_bytes_ + n * arena_at(arena).page_bytes <= budget_bytes_;
}

std::vector<int32_t> PagePool::allocate(int32_t arena, int64_t n) {
  Arena& a = arena_at(arena);
  if (!can_allocate(arena, n))
    fail(ErrorCode::kOutOfMemory,
         "KV pool: {} pages of {} ({} bytes each) do not fit: {} of {} bytes in use", n, a.name,
         a.page_bytes, used_bytes_, budget_bytes_);
  const auto n32 = static_cast<int32_t>(n);
  if (!a.meta.can_allocate(n32)) {
    a.meta.add_pages(std::max(n32 - a.meta.n_free(), 64));
    a.mem.resize(static_cast<size_t>(a.meta.n_pages()));
  }
  std::vector<int32_t> ids = a.meta.allocate(n32);
  for (int32_t id : ids) {
    auto& m = a.mem[static_cast<size_t>(id)];
    CAIRN_CHECK(!m, "free page {} still holds memory", id);
    const auto bytes = static_cast<size_t>(a.page_bytes);
    m.reset(static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t(64))));
    std::memset(m.get(), 0, bytes);
    used_bytes_ += a.page_bytes;
  }
  return ids;
}

void PagePool::release(int32_t arena, int32_t page) {
  Arena& a = arena_at(arena);
  if (!a.meta.release(page)) return;
  a.mem[static_cast<size_t>(page)].reset();
  used_bytes_ -= a.page_bytes;
}

int32_t PagePool::ref_count(int32_t arena, int32_t page) const {
  return arena_at(arena).meta.ref_count(page);
}

uint8_t* PagePool::data(int32_t arena, int32_t page) {
  Arena& a = arena_at(arena);
  CAIRN_CHECK(a.meta.ref_count(page) > 0, "data of free page {}", page);
  return a.mem[static_cast<size_t>(page)].get();
}

const uint8_t* PagePool::data(int32_t arena, int32_t page) const {
  const Arena& a = arena_at(arena);
  CAIRN_CHECK(a.meta.ref_count(page) > 0, "data of free page {}", page);
  return a.mem[static_cast<size_t>(page)].get();
}

void PagePool::follow(const PagePool& lead) {
  CAIRN_CHECK(lead.arenas_.size() == arenas_.size(), "follow: {} arenas, lead has {}",
              arenas_.size(), lead.arenas_.size());
  used_bytes_ = 0;
  for (size_t i = 0; i < arenas_.size(); ++i) {
    Arena& a = arenas_[i];
    const PageMeta& m = lead.arenas_[i].meta;
    CAIRN_CHECK(a.page_bytes == lead.arenas_[i].page_bytes, "follow: arena {} differs", i);
    a.meta = m;
    a.mem.resize(static_cast<size_t>(m.n_pages()));
    for (int32_t id = 0; id < m.n_pages(); ++id) {
      auto& mem = a.mem[static_cast<size_t>(id)];
      if (m.ref_count(id) == 0) {
        mem.reset();
        continue;
      }
      if (!mem) {
        const auto bytes = static_cast<size_t>(a.page_bytes);
        mem.reset(static_cast<uint8_t*>(::operator new[](bytes, std::align_val_t(64))));
        std::memset(mem.get(), 0, bytes);
      }
      used_bytes_ += a.page_bytes;
    }
  }
}

}  // namespace cairn
