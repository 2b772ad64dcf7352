// CPU-only bookkeeping of one page arena: reference counts, content keys and a
// LIFO free list of page ids. Holds no page memory. Every method checks its
// preconditions (CAIRN_CHECK): a failure is a bug in the caller.
#pragma once

#include <cstdint>
#include <vector>

namespace cairn {

// A full page's content key (DESIGN.md decision 5), filled by the prefix cache;
// zero while a page is partial or unnamed.
struct PageKey {
  uint64_t hi = 0, lo = 0;
  bool empty() const { return hi == 0 && lo == 0; }
  bool operator==(const PageKey&) const = default;
};

class PageMeta {
 public:
  explicit PageMeta(int32_t n_pages = 0) { add_pages(n_pages); }

  // Appends n fresh, free ids (the arena grew). Mutates the free list.
  void add_pages(int32_t n);

  int32_t n_pages() const { return static_cast<int32_t>(ref_.size()); }
  int32_t n_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t n_used() const { return n_pages() - n_free(); }

  // Plan: whether allocate(n) would succeed. Never mutates.
  bool can_allocate(int32_t n) const { return n >= 0 && n <= n_free(); }
  // Apply: n ids off the free list, each with ref count 1 and an empty key.
  // Precondition: can_allocate(n).
  std::vector<int32_t> allocate(int32_t n);

  // Precondition: page is in use (ref ≥ 1). Adds one reference.
  void retain(int32_t page);
  // Precondition: page is in use. Drops one reference; returns true when that
  // was the last (the page is back on the free list and its key cleared).
  bool release(int32_t page);

  int32_t ref_count(int32_t page) const;
  const PageKey& key(int32_t page) const;
  // Precondition: page is in use.
  void set_key(int32_t page, const PageKey& key);

 private:
  void check_id(int32_t page) const;

  std::vector<int32_t> ref_;   // [n_pages]
  std::vector<PageKey> keys_;  // [n_pages]
  std::vector<int32_t> free_;  // ids with ref 0; the back is handed out first
};

}  // namespace cairn
