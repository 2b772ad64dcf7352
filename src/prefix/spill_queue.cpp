#include "prefix/spill_queue.h"

#include <algorithm>
#include <exception>

#include "prefix/ssd_tier.h"

namespace cairn {

SpillQueue::SpillQueue(int64_t cap_bytes)
    : cap_bytes_(std::max<int64_t>(cap_bytes, 0)), copies_(cap_bytes_) {
  stats_.cap_bytes = cap_bytes_;
  thread_ = std::thread([this] { worker(); });
}

SpillQueue::~SpillQueue() {
  {
    std::lock_guard lock(mu_);
    closed_ = stop_ = true;
    for (const Item& it : queue_) {
      ++stats_.dropped;
      stats_.pending_bytes -= it.job.bytes;
    }
    stats_.pending_items -= static_cast<int64_t>(queue_.size());
    queue_.clear();
  }
  work_cv_.notify_all();
  thread_.join();
}

uint64_t SpillQueue::enqueue(SpillJob job) {
  uint64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    if (closed_) return 0;
    seq = next_seq_++;
    ++stats_.enqueued;
    ++stats_.pending_items;
    stats_.pending_bytes += job.bytes;
    queue_.push_back({seq, std::move(job)});
    drop_over_cap_locked(seq);
  }
  work_cv_.notify_one();
  return seq;
}

uint64_t SpillQueue::enqueue_page(SsdTier& tier, PageRecord r, bool droppable) {
  auto rec = std::make_shared<PageRecord>(std::move(r));
  if (!rec->owner) rec->own(&copies_);  // spans into pool pages: copy before they are freed
  const int64_t bytes = rec->payload_bytes() + static_cast<int64_t>(4 * rec->tokens.size());
  return enqueue({bytes, droppable, [&tier, rec] { return tier.write(*rec, false); }, &tier});
}

// Oldest droppable waiting job first, until the waiting and in-flight bytes fit.
void SpillQueue::drop_over_cap_locked(uint64_t keep_seq) {
  auto it = queue_.begin();
  while (stats_.pending_bytes > cap_bytes_ && it != queue_.end()) {
    if (!it->job.droppable || it->seq == keep_seq) {
      ++it;
      continue;
    }
    ++stats_.dropped;
    --stats_.pending_items;
    stats_.pending_bytes -= it->job.bytes;
    note_bad_locked(it->seq, true);
    it = queue_.erase(it);
  }
}

void SpillQueue::note_bad_locked(uint64_t seq, bool dropped) {
  constexpr size_t kMaxBad = 4096;
  if (bad_.size() == kMaxBad) {
    for (size_t i = 0; i < kMaxBad / 2; ++i) ++(bad_[i].dropped ? folded_dropped_ : folded_failed_);
    bad_.erase(bad_.begin(), bad_.begin() + kMaxBad / 2);
  }
  bad_.push_back({seq, dropped});
}

uint64_t SpillQueue::settled_through_locked() const {
  uint64_t first_open = next_seq_;
  if (in_flight_seq_ != 0) first_open = in_flight_seq_;
  if (!queue_.empty()) first_open = std::min(first_open, queue_.front().seq);
  if (unsynced_from_ != 0) first_open = std::min(first_open, unsynced_from_);
  return first_open - 1;
}

void SpillQueue::sync_dirty_locked(std::unique_lock<std::mutex>& lock) {
  if (dirty_.empty() || (!queue_.empty() && sync_wanted_ < unsynced_from_)) return;
  std::vector<SsdTier*> tiers = std::move(dirty_);
  dirty_.clear();
  const uint64_t first = unsynced_from_;
  lock.unlock();
  IoStatus s;
  for (SsdTier* t : tiers)
    if (IoStatus d = t->sync_dir(); !d.ok() && s.ok()) s = d;
  lock.lock();
  unsynced_from_ = 0;
  if (s.ok()) return;
  // Every flush window holding one of the unsynced jobs holds the first.
  ++stats_.failed;
  stats_.last_error = s.what;
  note_bad_locked(first, false);
}

void SpillQueue::worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    Item item = std::move(queue_.front());
    queue_.pop_front();
    in_flight_seq_ = item.seq;
    in_flight_bytes_ = item.job.bytes;
    lock.unlock();
    IoStatus s;
    try {
      s = item.job.run ? item.job.run() : IoStatus{};
    } catch (const std::exception& e) {
      s = {-1, e.what()};
    } catch (...) {
      s = {-1, "unknown exception"};
    }
    item.job.run = nullptr;  // frees what the job held before the counters say so
    lock.lock();
    if (s.ok() && item.job.sync_after) {
      if (std::find(dirty_.begin(), dirty_.end(), item.job.sync_after) == dirty_.end())
        dirty_.push_back(item.job.sync_after);
      if (unsynced_from_ == 0) unsynced_from_ = item.seq;
    }
    sync_dirty_locked(lock);
    in_flight_seq_ = 0;
    --stats_.pending_items;
    stats_.pending_bytes -= in_flight_bytes_;
    if (s.ok()) {
      ++stats_.written;
    } else {
      ++stats_.failed;
      stats_.last_error = s.what;
      note_bad_locked(item.seq, false);
    }
    done_cv_.notify_all();
  }
}

FlushResult SpillQueue::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  const uint64_t target = next_seq_ - 1;
  sync_wanted_ = std::max(sync_wanted_, target);  // the worker fsyncs after its current job
  const bool settled =
      done_cv_.wait_for(lock, timeout, [&] { return settled_through_locked() >= target; });
  FlushResult r;
  r.timed_out = !settled;
  r.dropped = folded_dropped_;
  r.failed = folded_failed_;
  for (const Bad& b : bad_)
    if (b.seq > reported_through_ && b.seq <= target) ++(b.dropped ? r.dropped : r.failed);
  if (!settled) {
    for (const Item& it : queue_)
      if (it.seq <= target) ++r.pending_items, r.pending_bytes += it.job.bytes;
    if (in_flight_seq_ != 0 && in_flight_seq_ <= target)
      ++r.pending_items, r.pending_bytes += in_flight_bytes_;
  } else {  // the window is reported: later flushes speak of later jobs
    reported_through_ = std::max(reported_through_, target);
    std::erase_if(bad_, [&](const Bad& b) { return b.seq <= reported_through_; });
    folded_dropped_ = folded_failed_ = 0;
  }
  r.durable = settled && r.dropped == 0 && r.failed == 0;
  r.last_error = stats_.last_error;
  return r;
}

FlushResult SpillQueue::drain(std::chrono::milliseconds timeout) {
  {
    std::lock_guard lock(mu_);
    closed_ = true;
  }
  FlushResult r = flush(timeout);
  {
    std::lock_guard lock(mu_);
    if (queue_.empty()) stop_ = true;
  }
  work_cv_.notify_all();
  return r;
}

SpillStats SpillQueue::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace cairn
