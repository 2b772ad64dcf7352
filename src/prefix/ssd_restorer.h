// Restores from the SSD tier on worker threads, several reads in flight, so
// that a restore overlaps the engine's other work. The engine thread submits
// the keys of a chain (from SsdTier::match_chain) and polls the handle; the
// pages' bytes then go into pool pages on the engine thread (a memcpy, no
// disk I/O there).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "prefix/ssd_tier.h"

namespace cairn {

// One submitted chain: results per page as they arrive.
class RestoreHandle {
 public:
  // tiers: [keys] the tier each page is read from; empty: the restorer's own.
  // on_settle, when given, is called on the reader's thread after each page settles.
  explicit RestoreHandle(std::vector<PageKey> keys, std::vector<SsdTier*> tiers = {},
                         std::function<void()> on_settle = {});
  size_t size() const { return keys_.size(); }
  const PageKey& key(size_t i) const { return keys_[i]; }
  bool done() const;  // every page read, failed or cancelled
  void wait() const;
  void wait_page(size_t i) const;  // until page i is settled
  // Pages served in a row from the first, counting only settled pages: what a
  // caller may use now (a failed page ends the usable chain).
  size_t ready_prefix() const;
  // The page's result; i < ready_prefix() or done(). Moves the record out.
  SsdRead take(size_t i);
  // Pages not yet started are skipped (error kMissing, "cancelled").
  void cancel();

 private:
  friend class SsdRestorer;
  void settle(size_t i, SsdRead r);
  bool cancelled() const;

  std::vector<PageKey> keys_;
  std::vector<SsdTier*> tiers_;
  std::function<void()> on_settle_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<SsdRead> results_;
  std::vector<bool> settled_;
  size_t n_settled_ = 0;
  bool cancelled_ = false;
};

class SsdRestorer {
 public:
  // n_threads ≥ 1 readers (the reads in flight); tier must outlive this.
  SsdRestorer(SsdTier& tier, int n_threads);
  // Cancels what has not started and joins the readers.
  ~SsdRestorer();
  SsdRestorer(const SsdRestorer&) = delete;
  SsdRestorer& operator=(const SsdRestorer&) = delete;

  // Queues a read of every key, first page first; from tiers[i] when given
  // (a generation checkpoint's pages live in two tiers), else this restorer's.
  // on_settle: called after each page settles (a waiting engine thread wakes).
  std::shared_ptr<RestoreHandle> submit(std::vector<PageKey> keys, std::vector<SsdTier*> tiers = {},
                                        std::function<void()> on_settle = {});
  // Queues jobs run by the readers in order (several at once); skip true: the
  // restorer is stopping, the job must settle whatever it stands for unread.
  // A job may wait for one queued before it, never for one after.
  using Job = std::function<void(bool skip)>;
  void submit_jobs(std::vector<Job> jobs);

 private:
  void reader();

  SsdTier& tier_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cairn
