// The caller's end of a submitted request: a thread-safe queue of Events that
// the engine thread fills and any one consumer drains.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "sched/request.h"

namespace cairn {

class RequestStream {
 public:
  RequestStream(uint64_t id, uint64_t seed) : id_(id), seed_(seed) {}

  uint64_t id() const { return id_; }
  // The seed the request samples with (the caller's, or the one the engine chose).
  uint64_t seed() const { return seed_; }

  // Waits up to `timeout` for the next event; false when none came. After the
  // finished event has been taken, returns false at once.
  bool next(Event& out, std::chrono::milliseconds timeout);
  // Waits for every event and merges them into one: all tokens, all text, and
  // the finish, usage and error of the last.
  Event collect();
  bool done() const;  // the finished event was pushed (maybe not yet taken)

  // Engine side: appends an event (merging text and tokens into a pending one
  // keeps the queue short when the consumer is slow).
  void push(Event e);

 private:
  const uint64_t id_, seed_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  bool pushed_final_ = false, taken_final_ = false;
};

}  // namespace cairn
