// Restores from the SSD tier on worker threads, several reads in flight, so
// that a restore overlaps the engine's other work. A layer-wise restore
// (layered_restore.h) queues one job per part of each page; the readers run
// them, the engine thread polls the restore.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn {

class SsdRestorer {
 public:
  // n_threads ≥ 1 readers (the reads in flight).
  explicit SsdRestorer(int n_threads);
  // Runs what has not started as skipped and joins the readers.
  ~SsdRestorer();
  SsdRestorer(const SsdRestorer&) = delete;
  SsdRestorer& operator=(const SsdRestorer&) = delete;

  // Queues jobs run by the readers in order (several at once); skip true: the
  // restorer is stopping, the job must settle whatever it stands for unread.
  // A job may wait for one queued before it, never for one after.
  using Job = std::function<void(bool skip)>;
  void submit_jobs(std::vector<Job> jobs);

 private:
  void reader();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cairn
