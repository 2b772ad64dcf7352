#include "kv/page_meta.h"

#include "core/error.h"

namespace cairn {

void PageMeta::add_pages(int32_t n) {
  CAIRN_CHECK(n >= 0, "add_pages({})", n);
  const int32_t first = n_pages();
  ref_.resize(static_cast<size_t>(first + n), 0);
  keys_.resize(static_cast<size_t>(first + n));
  // Pushed high to low so the lowest new id is handed out first.
  for (int32_t id = first + n - 1; id >= first; --id) free_.push_back(id);
}

std::vector<int32_t> PageMeta::allocate(int32_t n) {
  CAIRN_CHECK(can_allocate(n), "allocate({}) with {} free", n, n_free());
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int32_t& id : out) {
    id = free_.back();
    free_.pop_back();
    CAIRN_CHECK(ref_[static_cast<size_t>(id)] == 0, "free page {} has references", id);
    ref_[static_cast<size_t>(id)] = 1;
    keys_[static_cast<size_t>(id)] = {};
  }
  return out;
}

void PageMeta::check_id(int32_t page) const {
  CAIRN_CHECK(page >= 0 && page < n_pages(), "page {} outside [0, {})", page, n_pages());
}

void PageMeta::retain(int32_t page) {
  check_id(page);
  CAIRN_CHECK(ref_[static_cast<size_t>(page)] > 0, "retain of free page {}", page);
  ++ref_[static_cast<size_t>(page)];
}

bool PageMeta::release(int32_t page) {
  check_id(page);
  int32_t& r = ref_[static_cast<size_t>(page)];
  CAIRN_CHECK(r > 0, "release of free page {}", page);
  if (--r > 0) return false;
  keys_[static_cast<size_t>(page)] = {};
  free_.push_back(page);
  return true;
}

int32_t PageMeta::ref_count(int32_t page) const {
  check_id(page);
  return ref_[static_cast<size_t>(page)];
}

const PageKey& PageMeta::key(int32_t page) const {
  check_id(page);
  return keys_[static_cast<size_t>(page)];
}

void PageMeta::set_key(int32_t page, const PageKey& key) {
  check_id(page);
  CAIRN_CHECK(ref_[static_cast<size_t>(page)] > 0, "set_key on free page {}", page);
  keys_[static_cast<size_t>(page)] = key;
}

}  // namespace cairn
