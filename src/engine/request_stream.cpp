#include "engine/request_stream.h"

namespace cairn {

void RequestStream::push(Event e) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pushed_final_) return;
    pushed_final_ = e.finished;
    if (!events_.empty() && !events_.back().finished) {
      // The consumer is behind: fold into the event it has not taken yet.
      Event& last = events_.back();
      for (TokenOut& t : e.tokens) last.tokens.push_back(std::move(t));
      last.text += e.text;
      last.finished = e.finished;
      last.finish = e.finish;
      last.error = std::move(e.error);
      last.stop_index = e.stop_index;
      last.usage = e.usage;
    } else {
      events_.push_back(std::move(e));
    }
  }
  cv_.notify_all();
}

bool RequestStream::next(Event& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (taken_final_) return false;
  if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  out = std::move(events_.front());
  events_.pop_front();
  taken_final_ = out.finished;
  return true;
}

Event RequestStream::collect() {
  Event all, e;
  while (next(e, std::chrono::hours(24))) {
    for (TokenOut& t : e.tokens) all.tokens.push_back(std::move(t));
    all.text += e.text;
    if (e.finished) {
      all.finished = true;
      all.finish = e.finish;
      all.error = e.error;
      all.stop_index = e.stop_index;
      all.usage = e.usage;
    }
  }
  return all;
}

bool RequestStream::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pushed_final_;
}

}  // namespace cairn
