// Page memory under one byte budget. An arena holds pages of one size (one
// layer group in one format); its ids come from a PageMeta. A page's memory is
// taken from the budget when it is allocated and given back when its last
// reference is released, so the budget counts exactly the live pages and a
// 4-bit page, being ~3.5x smaller than a bf16 one, really leaves room for
// ~3.5x more tokens. Pages are zero-filled when allocated (unless the caller
// will write every byte first: a restore's spare pages), 64-byte aligned;
// on the host they are slots of huge-page slabs (host_slabs.h), reused once
// released.
//
// Pages live on the pool's device: host memory, or device memory of a GPU
// backend (each page its own stream-ordered allocation). data() is then a
// device address; page bytes move through copy_page, read and write, which
// work on either.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "kv/host_slabs.h"
#include "kv/page_meta.h"

namespace cairn {

class PagePool {
 public:
  explicit PagePool(int64_t budget_bytes, Device device = Device::cpu());
  Device device() const { return device_; }
  bool on_host() const { return device_.kind == DeviceKind::kCpu; }

  // Adds an arena of pages of page_bytes; returns its id. `name` is for messages.
  int32_t add_arena(int64_t page_bytes, std::string name);

  int64_t budget_bytes() const { return budget_bytes_; }
  int64_t used_bytes() const { return used_bytes_; }
  int64_t free_bytes() const { return budget_bytes_ - used_bytes_; }
  int64_t page_bytes(int32_t arena) const { return arena_at(arena).page_bytes; }
  int32_t n_used_pages(int32_t arena) const { return arena_at(arena).meta.n_used(); }
  int32_t n_pages(int32_t arena) const { return arena_at(arena).meta.n_pages(); }  // ids so far
  int32_t n_used_pages() const;  // over all arenas
  const std::string& arena_name(int32_t arena) const { return arena_at(arena).name; }

  // Plan: whether allocate(arena, n) fits the budget. Never mutates.
  bool can_allocate(int32_t arena, int64_t n) const;
  // Apply: n new pages (ref 1, zeroed). Error(kOutOfMemory) when they do not fit.
  // `zeroed` false (host pools): the bytes are left as they are, for a caller that writes
  // every byte before anything reads the page (its memory is faulted in on a background
  // thread meanwhile: prefault.h); a page released unwritten is zeroed again when it is
  // next allocated zeroed, like any other.
  std::vector<int32_t> allocate(int32_t arena, int64_t n, bool zeroed = true);
  int32_t allocate_one(int32_t arena, bool zeroed = true) { return allocate(arena, 1, zeroed)[0]; }
  void retain(int32_t arena, int32_t page) { arena_at(arena).meta.retain(page); }
  // Drops a reference; the page's memory returns to the budget with the last one.
  void release(int32_t arena, int32_t page);
  int32_t ref_count(int32_t arena, int32_t page) const;

  // The page's first byte (a device address when the pool is not on the host).
  uint8_t* data(int32_t arena, int32_t page);
  const uint8_t* data(int32_t arena, int32_t page) const;
  // A view of bytes [offset, offset + shape's bytes) of a live page.
  Tensor view(int32_t arena, int32_t page, size_t offset, const Shape& shape, DType dtype) const;
  // Page `to` := page `from` (same arena), ordered on the device's stream.
  void copy_page(int32_t arena, int32_t from, int32_t to);
  // A page's bytes to or from host memory [page_bytes(arena)]; read waits for
  // the copy, write too unless wait is false: then the bytes must stay as they
  // are until wait_copies() returns (page-locked bytes copy asynchronously).
  void read(int32_t arena, int32_t page, std::span<uint8_t> out) const;
  void write(int32_t arena, int32_t page, std::span<const uint8_t> bytes, bool wait = true);
  void wait_copies() const;
  PageMeta& meta(int32_t arena) { return arena_at(arena).meta; }
  const PageMeta& meta(int32_t arena) const { return arena_at(arena).meta; }

  // Makes this pool's ids, reference counts and free lists those of `lead`, a
  // pool with the same arenas (a lockstep KV shard's, after a step that failed
  // part way): free pages give their memory back, pages live in lead only are
  // allocated zeroed. Page bytes of pages live in both are kept.
  void follow(const PagePool& lead);

 private:
  struct Arena {
    int64_t page_bytes = 0;
    std::string name;
    PageMeta meta;
    std::vector<std::shared_ptr<Storage>> mem;  // [meta.n_pages()], null while free
    std::unique_ptr<HostSlabs> slabs;           // host pools: where pages come from
  };
  Arena& arena_at(int32_t a);
  const Arena& arena_at(int32_t a) const;
  const std::shared_ptr<Storage>& live(int32_t arena, int32_t page) const;
  std::shared_ptr<Storage> new_page(Arena& a, bool zeroed);

  int64_t budget_bytes_;
  Device device_;
  int64_t used_bytes_ = 0;
  std::vector<Arena> arenas_;
};

}  // namespace cairn
