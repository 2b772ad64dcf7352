#include "tokenizer/stop_matcher.h"

#include <algorithm>

namespace cairn::tok {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) stops_.push_back(std::move(s));
}

size_t StopMatcher::longest_partial_suffix() const {
  size_t best = 0;
  for (const std::string& stop : stops_) {
    if (stop.empty()) continue;
    const size_t max_len = std::min(stop.size() - 1, held_.size());
    for (size_t len = max_len; len > best; --len) {
      if (held_.compare(held_.size() - len, len, stop, 0, len) == 0) {
        best = len;
        break;
      }
    }
  }
  return best;
}

StopMatcher::Result StopMatcher::feed(std::string_view text) {
  Result result;
  if (stopped_) return result;
  held_.append(text);
  // The earliest stop string wins; at one position, the first listed.
  size_t best_pos = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    if (stops_[i].empty()) continue;
    const size_t pos = held_.find(stops_[i]);
    if (pos < best_pos) {
      best_pos = pos;
      result.stop_index = static_cast<int>(i);
    }
  }
  if (best_pos != std::string::npos) {
    result.text = held_.substr(0, best_pos);
    result.stopped = stopped_ = true;
    held_.clear();
    return result;
  }
  const size_t keep = longest_partial_suffix();
  result.text = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return result;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(held_);
  return stopped_ ? std::string() : out;
}

}  // namespace cairn::tok
