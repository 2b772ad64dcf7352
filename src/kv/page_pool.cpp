#include "kv/page_pool.h"

#include <cstring>

#include "backend/device.h"
#include "backend/on_device.h"
#include "core/error.h"
#include "kv/prefault.h"

namespace cairn {

PagePool::PagePool(int64_t budget_bytes, Device device)
    : budget_bytes_(budget_bytes), device_(device) {
  if (budget_bytes <= 0)
    fail(ErrorCode::kInvalidArgument, "KV budget {} bytes must be > 0", budget_bytes);
}

int32_t PagePool::add_arena(int64_t page_bytes, std::string name) {
  CAIRN_CHECK(page_bytes > 0, "arena {} with page_bytes {}", name, page_bytes);
  arenas_.push_back(Arena{page_bytes, std::move(name), PageMeta(0), {}, nullptr});
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

std::vector<int32_t> PagePool::allocate(int32_t arena, int64_t n, bool zeroed) {
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
    m = new_page(a, zeroed);
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

std::shared_ptr<Storage> PagePool::new_page(Arena& a, bool zeroed) {
  const int64_t bytes = a.page_bytes;
  const auto n = static_cast<size_t>(bytes);
  if (on_host()) {
    if (!a.slabs) a.slabs = std::make_unique<HostSlabs>(bytes);
    std::shared_ptr<Storage> m = a.slabs->allocate();
    if (zeroed)
      std::memset(m->data(), 0, n);
    else
      prefault_async(m);  // its writes to come find the memory mapped
    return m;
  }
  const OnDevice on(device_);  // a shard on another GPU than the calling thread's
  DeviceBackend& dev = device_backend(device_.kind);
  std::shared_ptr<Storage> m = dev.allocate(n);
  Tensor t = Tensor::view_of(m, 0, {bytes}, DType::kU8);
  dev.zero(t);
  return m;
}

const std::shared_ptr<Storage>& PagePool::live(int32_t arena, int32_t page) const {
  const Arena& a = arena_at(arena);
  CAIRN_CHECK(a.meta.ref_count(page) > 0, "data of free page {}", page);
  return a.mem[static_cast<size_t>(page)];
}

uint8_t* PagePool::data(int32_t arena, int32_t page) {
  return static_cast<uint8_t*>(live(arena, page)->data());
}

const uint8_t* PagePool::data(int32_t arena, int32_t page) const {
  return static_cast<const uint8_t*>(live(arena, page)->data());
}

Tensor PagePool::view(int32_t arena, int32_t page, size_t offset, const Shape& shape,
                      DType dtype) const {
  return Tensor::view_of(live(arena, page), offset, shape, dtype);
}

void PagePool::copy_page(int32_t arena, int32_t from, int32_t to) {
  const int64_t n = page_bytes(arena);
  Tensor dst = view(arena, to, 0, {n}, DType::kU8);
  const OnDevice on(device_);
  device_backend(device_.kind).copy(view(arena, from, 0, {n}, DType::kU8), dst);
}

void PagePool::read(int32_t arena, int32_t page, std::span<uint8_t> out) const {
  const int64_t n = page_bytes(arena);
  CAIRN_CHECK(out.size() == static_cast<size_t>(n), "read of {} bytes from a {}-byte page",
              out.size(), n);
  if (on_host()) {
    std::memcpy(out.data(), data(arena, page), out.size());
    return;
  }
  Tensor dst = Tensor::view_of(borrow_host(out.data(), out.size()), 0, {n}, DType::kU8);
  const OnDevice on(device_);
  DeviceBackend& dev = device_backend(device_.kind);
  dev.copy(view(arena, page, 0, {n}, DType::kU8), dst);
  dev.synchronize();
}

void PagePool::write(int32_t arena, int32_t page, std::span<const uint8_t> bytes, bool wait) {
  const int64_t n = page_bytes(arena);
  CAIRN_CHECK(bytes.size() == static_cast<size_t>(n), "write of {} bytes to a {}-byte page",
              bytes.size(), n);
  if (on_host()) {
    std::memcpy(data(arena, page), bytes.data(), bytes.size());
    return;
  }
  const Tensor src = Tensor::view_of(borrow_host(const_cast<uint8_t*>(bytes.data()), bytes.size()),
                                     0, {n}, DType::kU8);
  Tensor dst = view(arena, page, 0, {n}, DType::kU8);
  const OnDevice on(device_);  // on another GPU: waited for as the scope ends
  DeviceBackend& dev = device_backend(device_.kind);
  dev.copy(src, dst);
  if (wait) dev.synchronize();  // the caller's bytes may go once this returns
}

void PagePool::wait_copies() const {
  if (on_host()) return;
  const OnDevice on(device_);
  device_backend(device_.kind).synchronize();
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
      if (!mem) mem = new_page(a, true);
      used_bytes_ += a.page_bytes;
    }
  }
}

}  // namespace cairn
