#include "kv/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace cairn {
namespace {

// One worker for the process, started on first use, joined at exit.
class Prefaulter {
 public:
  Prefaulter() : worker_([this] { run(); }) {}
  ~Prefaulter() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  void add(std::shared_ptr<Storage> s) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(s));
      ++queued_;
    }
    cv_.notify_all();
  }

  void drain() {
    std::unique_lock lock(mu_);
    const uint64_t upto = queued_;
    cv_.wait(lock, [&] { return done_ >= upto; });
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::shared_ptr<Storage> s = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      populate(*s);
      s.reset();  // may return the page's slot: outside the lock
      lock.lock();
      ++done_;
      cv_.notify_all();
    }
  }

  // The whole 4 KiB pages the storage touches (a neighbour's share of a page is faulted in
  // too, which changes nothing of its contents).
  static void populate(const Storage& s) {
    static const auto kPage = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(s.data()) / kPage * kPage;
    const uintptr_t end =
        (reinterpret_cast<uintptr_t>(s.data()) + s.size_bytes() + kPage - 1) / kPage * kPage;
    if (end > begin)
      (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Storage>> queue_;
  uint64_t queued_ = 0, done_ = 0;
  bool stop_ = false;
  std::thread worker_;  // last: started once the rest is constructed
};

Prefaulter& prefaulter() {
  static Prefaulter p;
  return p;
}

}  // namespace

void prefault_async(std::shared_ptr<Storage> s) {
  if (s && s->size_bytes() > 0) prefaulter().add(std::move(s));
}

void prefault_drain() {
  prefaulter().drain();
}

}  // namespace cairn
