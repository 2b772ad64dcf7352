#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace cairn::server {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(bounds_.size() + 1) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  buckets_[i].fetch_add(1);
  count_.fetch_add(1);
  sum_micros_.fetch_add(static_cast<int64_t>(seconds * 1e6));
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  int64_t cumulative = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    cumulative += buckets_[i].load();
    std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, le, cumulative);
  }
  out += fmt::format("{}_sum {}\n{}_count {}\n", name,
                     static_cast<double>(sum_micros_.load()) / 1e6, name, count_.load());
}

namespace {

std::vector<double> latency_bounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1,  0.25,
          0.5,   0.75,   1.0,   2.5,  5.0,   10.0, 20.0,  40.0, 80.0};
}

void line(std::string& out, const char* type, const std::string& name, const std::string& help,
          double value) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, value);
}

// The SSD tier and the spill queue (zero without --ssd-cache).
void tier_lines(std::string& out, const EngineStats& s) {
  auto d = [](int64_t v) { return static_cast<double>(v); };
  line(out, "gauge", "cairn_host_cache_bytes", "bytes of the host-RAM prefix tier",
       d(s.host_cache_bytes));
  line(out, "gauge", "cairn_host_cache_pages", "pages in the host-RAM prefix tier",
       d(s.host_cache_pages));
  line(out, "gauge", "cairn_host_cache_memory_bytes",
       "host memory the host-RAM tier has allocated (in chunks, kept for reuse)",
       d(s.host_cache_memory_bytes));
  line(out, "counter", "cairn_host_cache_evictions_total",
       "pages the host-RAM tier passed on to the SSD tier (or dropped without one)",
       d(s.host_cache_evictions));
  line(out, "counter", "cairn_host_restored_pages_total", "pages copied back from the host tier",
       d(s.host_restored_pages));
  line(out, "counter", "cairn_host_restore_bytes_total", "bytes copied back from the host tier",
       d(s.host_restore_bytes));
  line(out, "counter", "cairn_host_restore_seconds_total", "time spent copying them back",
       s.host_restore_seconds);
  line(out, "gauge", "cairn_ssd_cache_files", "page files in the SSD tier", d(s.ssd_files));
  line(out, "gauge", "cairn_ssd_cache_bytes", "bytes of the SSD tier", d(s.ssd_bytes));
  line(out, "counter", "cairn_ssd_corrupt_total", "SSD page files that failed a check (missed)",
       d(s.ssd_corrupt));
  line(out, "counter", "cairn_ssd_restored_pages_total", "pages restored from the SSD tier",
       d(s.ssd_restored_pages));
  line(out, "counter", "cairn_ssd_restore_bytes_total", "bytes read back from the SSD tier",
       d(s.ssd_restore_bytes));
  line(out, "counter", "cairn_ssd_restore_seconds_total", "time spent reading and verifying",
       s.ssd_restore_seconds);
  line(out, "counter", "cairn_ssd_restore_cut_backs_total",
       "sequences cut back because a page still arriving failed its check (computed again)",
       d(s.ssd_restore_cut_backs));
  line(out, "gauge", "cairn_spill_pending_items", "pages waiting to be written",
       d(s.spill_pending_items));
  line(out, "gauge", "cairn_spill_pending_bytes", "bytes waiting to be written",
       d(s.spill_pending_bytes));
  line(out, "counter", "cairn_spill_written_total", "pages written durably", d(s.spill_written));
  line(out, "counter", "cairn_spill_dropped_total", "pages dropped over the spill queue's cap",
       d(s.spill_dropped));
  line(out, "counter", "cairn_spill_failed_total", "page writes that failed", d(s.spill_failed));
  line(out, "gauge", "cairn_checkpoint_files", "generation checkpoints on disk",
       d(s.checkpoint_files));
  line(out, "counter", "cairn_checkpoints_written_total", "generation checkpoints written durably",
       d(s.checkpoints_written));
  line(out, "counter", "cairn_checkpoints_resumed_total",
       "requests that resumed a generation checkpoint", d(s.checkpoints_resumed));
  line(out, "counter", "cairn_checkpoints_failed_total",
       "generation checkpoint writes or removals that failed", d(s.checkpoints_failed));
  line(out, "counter", "cairn_checkpoints_corrupt_total",
       "generation checkpoints that failed a check (missed and removed)", d(s.checkpoints_corrupt));
}

}  // namespace

ServerMetrics::ServerMetrics()
    : ttft(latency_bounds()), inter_token(latency_bounds()), e2e(latency_bounds()) {}

void ServerMetrics::count_request(const std::string& route, int status) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
}

void ServerMetrics::count_tokens(int64_t prompt, int64_t generated) {
  prompt_tokens_.fetch_add(prompt);
  generated_tokens_.fetch_add(generated);
}

std::string ServerMetrics::render(const EngineStats& s, bool ready, bool draining) const {
  std::string out;
  out += "# HELP cairn_http_requests_total HTTP requests answered, by route and status\n";
  out += "# TYPE cairn_http_requests_total counter\n";
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, n] : requests_)
      out += fmt::format("cairn_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first,
                         key.second, n);
  }
  auto d = [](int64_t v) { return static_cast<double>(v); };
  line(out, "counter", "cairn_prompt_tokens_total", "prompt tokens of finished requests",
       d(prompt_tokens_.load()));
  line(out, "counter", "cairn_generation_tokens_total", "tokens generated for finished requests",
       d(generated_tokens_.load()));
  line(out, "counter", "cairn_client_disconnects_total", "streams cancelled by a client leaving",
       d(disconnects_.load()));
  ttft.write(out, "cairn_time_to_first_token_seconds",
             "submit to first token, measured in the server");
  inter_token.write(out, "cairn_inter_token_latency_seconds", "time between tokens of one request");
  e2e.write(out, "cairn_request_duration_seconds", "submit to last token");
  line(out, "gauge", "cairn_ready", "1 once the model is loaded and admitting", ready && !draining);
  line(out, "gauge", "cairn_draining", "1 while shutting down", draining);
  line(out, "gauge", "cairn_queue_depth", "requests waiting for admission", d(s.n_waiting));
  line(out, "gauge", "cairn_running_sequences", "sequences in the running batch", d(s.n_running));
  line(out, "gauge", "cairn_kv_pages_used", "KV pages held by sequences", d(s.kv_pages_used));
  if (s.kv_pages_used > 0 && s.kv_bytes_used > 0) {
    double page_bytes = d(s.kv_bytes_used) / d(s.kv_pages_used);
    line(out, "gauge", "cairn_kv_pages_free", "KV pages the budget still holds (estimated)",
         std::max(0.0, (d(s.kv_bytes_budget) - d(s.kv_bytes_used)) / page_bytes));
  }
  line(out, "gauge", "cairn_kv_bytes_used", "KV page bytes in use", d(s.kv_bytes_used));
  line(out, "gauge", "cairn_kv_bytes_free", "KV page bytes left in the budget",
       d(std::max<int64_t>(0, s.kv_bytes_budget - s.kv_bytes_used)));
  line(out, "gauge", "cairn_prefix_cache_bytes", "bytes held by the prefix cache",
       d(s.prefix_cache_bytes));
  line(out, "counter", "cairn_prefix_cache_queries_total", "prefix lookups", d(s.prefix_queries));
  line(out, "counter", "cairn_prefix_cache_hits_total", "prefix lookups that hit",
       d(s.prefix_hits));
  line(out, "counter", "cairn_prefix_cache_hit_tokens_total",
       "prompt tokens served from the prefix cache", d(s.prefix_hit_tokens));
  line(out, "counter", "cairn_engine_requests_submitted_total",
       "requests the engine admitted to its queue", d(s.requests_submitted));
  line(out, "counter", "cairn_engine_requests_rejected_total", "requests the engine refused",
       d(s.requests_rejected));
  line(out, "counter", "cairn_engine_preemptions_total", "sequences preempted for KV space",
       d(s.preemptions));
  line(out, "counter", "cairn_engine_steps_total", "engine steps run", d(s.steps));
  tier_lines(out, s);
  return out;
}

}  // namespace cairn::server
