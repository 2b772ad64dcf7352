#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace cairn {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(::isatty(STDERR_FILENO) != 0) {}

void ProgressBar::update(size_t done, size_t total) {
  if (!tty_ || total == 0) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  constexpr int kWidth = 30;
  double frac = static_cast<double>(done) / static_cast<double>(total);
  int filled = static_cast<int>(frac * kWidth);
  fmt::print(stderr, "\r{} [{}{}] {:3.0f}% {:.2f}/{:.2f} GB", label_, std::string(filled, '#'),
             std::string(kWidth - filled, ' '), frac * 100.0, done / 1e9, total / 1e9);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace cairn
