// What /metrics exposes in Prometheus text format (version 0.0.4): counters and
// latency histograms measured by the server, and the engine's gauges.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace cairn::server {

// A cumulative histogram over fixed upper bounds (seconds); thread-safe.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double seconds);
  // Appends # HELP, # TYPE and the _bucket{le=…}, _sum and _count lines.
  void write(std::string& out, const std::string& name, const std::string& help) const;
  int64_t count() const { return count_.load(); }

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<int64_t>> buckets_;  // [bounds + 1]: the last is +Inf
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_micros_{0};
};

class ServerMetrics {
 public:
  ServerMetrics();
  // One finished HTTP exchange on a route ("/v1/chat/completions") with its status.
  void count_request(const std::string& route, int status);
  void count_tokens(int64_t prompt, int64_t generated);
  void count_disconnect() { disconnects_.fetch_add(1); }

  Histogram ttft;         // submit → first token
  Histogram inter_token;  // between successive tokens of one request
  Histogram e2e;          // submit → finished

  // The whole exposition, with `stats` as gauges and engine counters.
  std::string render(const EngineStats& stats, bool ready, bool draining) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::atomic<int64_t> prompt_tokens_{0}, generated_tokens_{0}, disconnects_{0};
};

}  // namespace cairn::server
