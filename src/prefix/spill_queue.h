// The spill queue: bounded write-behind between the engine thread and the
// disk. Producers (RAM-tier eviction; a second queue carries generation
// checkpoints and their removals) enqueue jobs; one worker thread runs them strictly in order. Over
// its byte cap the queue drops the oldest droppable job that is waiting (never
// the one being added, never one in flight): prefix pages are droppable, a
// checkpoint is not. A failing job (ENOSPC, EIO, an exception) is counted and
// serving goes on. See docs/durability.md.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "prefix/buffer_pool.h"
#include "prefix/page_file_io.h"

namespace cairn {

class SsdTier;
struct PageRecord;

// A unit of write-behind work: `bytes` is what it holds in memory until done.
struct SpillJob {
  int64_t bytes = 0;
  bool droppable = true;
  std::function<IoStatus()> run;  // called on the worker; its status decides written/failed
  // A tier the job wrote without fsyncing its directory: the worker fsyncs it
  // once for a run of such jobs — when the queue runs dry or a flush waits —
  // and only then are those jobs settled.
  SsdTier* sync_after = nullptr;
};

struct SpillStats {
  int64_t pending_items = 0, pending_bytes = 0;  // waiting or in flight
  int64_t enqueued = 0, written = 0, dropped = 0, failed = 0;
  int64_t cap_bytes = 0;
  std::string last_error;  // of the newest failed job
};

// What flush found. durable: every job enqueued before the call has run and
// none of those enqueued since the previous completed flush was dropped or failed.
struct FlushResult {
  bool durable = false;
  bool timed_out = false;
  int64_t pending_items = 0, pending_bytes = 0;  // of the flushed window, still waiting
  int64_t dropped = 0, failed = 0;               // in the window
  std::string last_error;
};

class SpillQueue {
 public:
  // cap_bytes: --spill-queue-bytes (0: keep only the job being added and the
  // one in flight). Starts the worker.
  explicit SpillQueue(int64_t cap_bytes);
  // Finishes the job in flight; waiting jobs are dropped (call drain first).
  ~SpillQueue();
  SpillQueue(const SpillQueue&) = delete;
  SpillQueue& operator=(const SpillQueue&) = delete;

  // Never blocks on disk I/O. Returns the job's sequence number (from 1), or 0
  // when the queue is closed (after drain) and the job was not taken.
  uint64_t enqueue(SpillJob job);
  // Convenience: a droppable job writing r to tier (which must outlive the
  // queue). A record without an owner has its bytes copied first, into
  // buffers the queue reuses (a memcpy on the caller's thread, no fresh memory).
  uint64_t enqueue_page(SsdTier& tier, PageRecord r, bool droppable = true);

  // Waits until every job enqueued before the call has run (or been dropped),
  // at most timeout. Reports on the jobs enqueued since the previous completed flush.
  FlushResult flush(std::chrono::milliseconds timeout);
  // Shutdown: stops taking jobs, then flushes. The worker stops when it is empty.
  FlushResult drain(std::chrono::milliseconds timeout);

  SpillStats stats() const;

 private:
  struct Item {
    uint64_t seq = 0;
    SpillJob job;
  };
  struct Bad {  // a job dropped or failed, until a flush reports it
    uint64_t seq = 0;
    bool dropped = false;
  };

  void worker();
  // Worker, mu_ held through `lock`: fsyncs the dirty tiers' directories when
  // the queue ran dry or a flush waits on an unsynced job.
  void sync_dirty_locked(std::unique_lock<std::mutex>& lock);
  void drop_over_cap_locked(uint64_t keep_seq);
  void note_bad_locked(uint64_t seq, bool dropped);
  // Every job with seq ≤ this has settled (run or dropped).
  uint64_t settled_through_locked() const;

  int64_t cap_bytes_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Item> queue_;
  uint64_t next_seq_ = 1, in_flight_seq_ = 0;
  int64_t in_flight_bytes_ = 0;
  uint64_t reported_through_ = 0;
  std::vector<Bad> bad_;
  // Bad jobs folded out of bad_ when it grows long without a flush: reported by
  // the next flush that completes (at worst one too early: never "durable" wrongly).
  int64_t folded_dropped_ = 0, folded_failed_ = 0;
  bool closed_ = false, stop_ = false;
  std::vector<SsdTier*> dirty_;  // tiers written since their last directory fsync
  uint64_t unsynced_from_ = 0;   // the first job those writes belong to; 0: none
  uint64_t sync_wanted_ = 0;     // a flush waits for jobs through this one
  SpillStats stats_;
  BufferPool copies_;  // record copies, reused up to the cap
  std::thread thread_;
};

}  // namespace cairn
