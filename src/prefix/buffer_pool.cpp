#include "prefix/buffer_pool.h"

#include <algorithm>

namespace cairn {

BufferPool::BufferPool(int64_t max_kept_bytes) : state_(std::make_shared<State>()) {
  state_->max_kept = std::max<int64_t>(max_kept_bytes, 0);
}

std::shared_ptr<AlignedBytes> BufferPool::acquire(size_t n) {
  std::unique_ptr<AlignedBytes> b;
  {
    std::lock_guard lock(state_->mu);
    // The smallest kept buffer that fits, else the largest (grown below).
    auto& fr = state_->free;
    auto best = fr.end();
    for (auto it = fr.begin(); it != fr.end(); ++it)
      if (((*it)->capacity() >= n) && (best == fr.end() || (*it)->capacity() < (*best)->capacity()))
        best = it;
    if (best == fr.end() && !fr.empty())
      best = std::max_element(fr.begin(), fr.end(), [](const auto& a, const auto& b) {
        return a->capacity() < b->capacity();
      });
    if (best != fr.end()) {
      b = std::move(*best);
      fr.erase(best);
      state_->kept -= static_cast<int64_t>(b->capacity());
    }
  }
  if (!b) b = std::make_unique<AlignedBytes>();
  b->reserve(n);
  std::shared_ptr<State> st = state_;
  return {b.release(), [st](AlignedBytes* p) {
            std::unique_ptr<AlignedBytes> owned(p);
            std::lock_guard lock(st->mu);
            const auto cap = static_cast<int64_t>(owned->capacity());
            if (st->kept + cap > st->max_kept) return;  // freed
            st->kept += cap;
            st->free.push_back(std::move(owned));
          }};
}

int64_t BufferPool::kept_bytes() const {
  std::lock_guard lock(state_->mu);
  return state_->kept;
}

}  // namespace cairn
