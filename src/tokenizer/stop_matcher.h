// Stop strings over streamed text: text that could still be the start of a stop
// string is held back; it is released as soon as it cannot, and a completed
// stop string ends the stream with the text before it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cairn::tok {

class StopMatcher {
 public:
  struct Result {
    std::string text;      // safe to emit now (before the stop string when stopped)
    bool stopped = false;  // a stop string completed
    int stop_index = -1;   // which one (index into the constructor's list)
  };

  // Empty stop strings are ignored.
  explicit StopMatcher(std::vector<std::string> stops);

  // Feeds the next piece of text (complete UTF-8). After a stop, returns nothing.
  Result feed(std::string_view text);
  // At the end of generation: releases what is held back.
  std::string flush();
  bool stopped() const { return stopped_; }
  const std::string& held() const { return held_; }

 private:
  // Bytes at the end of held_ that are a proper prefix of some stop string.
  size_t longest_partial_suffix() const;

  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace cairn::tok
