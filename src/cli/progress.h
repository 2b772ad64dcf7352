// A one-line progress bar on stderr for long loads: "loading [#####     ] 52% 1.2/2.3 GB".
// Draws only when stderr is a terminal, at most ten times a second.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace cairn {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  void update(size_t done, size_t total);
  void finish();  // ends the line if anything was drawn

 private:
  std::string label_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace cairn
